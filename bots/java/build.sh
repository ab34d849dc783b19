#!/bin/sh
# Builds the Java example bot into build/ (its classes and build/arena-bot, the script that runs them), offline,
# from Debian's (or Ubuntu's) packages:
#   apt-get install openjdk-17-jdk-headless protobuf-compiler protobuf-compiler-grpc-java-plugin \
#       libgrpc-java libprotobuf-java libnetty-java libperfmark-java libguava-java
# Those put the jars in /usr/share/java: javac compiles against them and the JVM runs with them on its classpath,
# so there is no Maven, no Gradle and no network. (Elsewhere, set JAVA_LIBS to a folder holding the same jars,
# and GRPC_JAVA_PLUGIN to the plugin if grpc_java_plugin is not on the PATH.)
#
#   sh build.sh        (in this folder, or from anywhere: it works in its own folder)
set -eu
cd "$(dirname "$0")"
libs=${JAVA_LIBS:-/usr/share/java}
plugin=${GRPC_JAVA_PLUGIN:-$(command -v grpc_java_plugin || true)}
for tool in protoc javac java; do
    command -v "$tool" >/dev/null || { echo "build.sh: no $tool (see the packages above)" >&2; exit 1; }
done
[ -n "$plugin" ] || { echo "build.sh: no grpc_java_plugin (protobuf-compiler-grpc-java-plugin)" >&2; exit 1; }

# What the bot runs with: gRPC (its Netty transport), protobuf, Netty, and what gRPC needs of Guava and PerfMark.
# Debian's unversioned names, which its packages keep pointing at their current versions.
jars="grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite grpc-stub protobuf guava
      perfmark-api netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-common netty-handler
      netty-resolver netty-transport"
classpath=""
for jar in $jars; do
    [ -f "$libs/$jar.jar" ] || { echo "build.sh: no $libs/$jar.jar (see the packages above)" >&2; exit 1; }
    classpath="$classpath:$libs/$jar.jar"
done
classpath=${classpath#:}

# The protocol (version 2) is the envelope arena/v2/arena.proto and one .proto per game,
# arena/games/<game>/<game>.proto. Where they are: proto/ beside this file holds them all (a bot made by
# `arena new`); else the arena's own source tree (bots/java in it) has the envelope under proto/ and the games
# under its root.
if [ -f proto/arena/v2/arena.proto ]; then
    envelope_root=proto games_root=proto
else
    envelope_root=../../proto games_root=../..
fi

# The generated classes: package arena.v2 (the envelope, in ArenaOuterClass, and its gRPC client, ArenaGrpc) and
# arena.<game>.v1 (its View and events, in a class named after the game: arena.cabanga.v1.Cabanga.View), for every
# game's .proto found.
rm -rf build
mkdir -p build/src build/classes
protoc -I "$envelope_root" --java_out=build/src --plugin=protoc-gen-grpc-java="$plugin" --grpc-java_out=build/src \
    arena/v2/arena.proto
games=""
for proto in "$games_root"/arena/games/*/*.proto; do
    [ -f "$proto" ] || continue
    game=$(basename "$proto" .proto)
    games="$games arena/games/$game/$game.proto"
done
if [ -n "$games" ]; then
    # shellcheck disable=SC2086  # one argument per game
    protoc -I "$games_root" --java_out=build/src $games
fi

# The gRPC plugin (1.41) marks its class @javax.annotation.Generated, which Java 9 and later do not have (it
# left the JDK with javax.annotation); javax.annotation.processing.Generated, the JDK's own, is the same
# annotation (kept in the source only), and newer plugins write it.
sed -i 's/@javax\.annotation\.Generated(/@javax.annotation.processing.Generated(/' build/src/arena/v2/ArenaGrpc.java
# -nowarn: the generated code's deprecation notes are not the author's business. javac's own JVM (-J): C1 alone
# and the serial GC, a third of the CPU time of its defaults for a one-off compilation like this one (about 4 s
# of CPU); and, like the bot's below, reservations that fit the address space of a contest's build jail (its
# memory_mb, 1024 unless the operator gives builds more), where a JVM left to itself does not start.
find build/src -name '*.java' > build/sources
MALLOC_ARENA_MAX=2 javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-Xmx384m -J-XX:ReservedCodeCacheSize=64m \
    -J-XX:CompressedClassSpaceSize=64m -nowarn -encoding UTF-8 -cp "$classpath" -d build/classes \
    Bot.java @build/sources

# The program the arena runs. Its JVM must fit the arena's default limits: memory_mb = 1024 is the address space
# (RLIMIT_AS) of each process, and a JVM left to itself reserves a quarter of the machine's memory for its heap
# and 1 GiB for its classes' metadata, and does not start. So: a 64 MiB heap, small reservations for metadata and
# compiled code, the serial GC (no GC threads), C1 only with one compiler thread (it starts faster, and a card
# bot needs no C2), small stacks, and two malloc arenas (glibc reserves 64 MiB of address space for each thread's
# arena otherwise). The bot then holds about 450 MiB of address space, 60 MiB of memory and 15 threads.
# io.netty.machineId: the jail has no network card, whose address Netty would look for, and warn about.
cat > build/arena-bot <<EOF
#!/bin/sh
# Written by build.sh: runs the Java bot (build/classes) with Debian's jars, within the arena's default limits.
here=\$(dirname "\$0")
MALLOC_ARENA_MAX=2 exec java -Xmx64m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 \\
    -XX:ReservedCodeCacheSize=32m -XX:MaxMetaspaceSize=96m -XX:CompressedClassSpaceSize=32m \\
    -Dio.netty.machineId=02:00:00:00:00:01 \\
    -cp "\$here/classes:$classpath" Bot "\$@"
EOF
chmod +x build/arena-bot
echo "built $PWD/build/arena-bot"
