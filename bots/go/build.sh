#!/bin/sh
# Builds the Go example bot into build/arena-bot, offline, from Debian's (or Ubuntu's) packages:
#   apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#       golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc protobuf-compiler
# Those put gRPC's and protobuf's Go sources under /usr/share/gocode/src, so Go builds in GOPATH mode
# (GO111MODULE=off) with GOPATH = build (the code generated here) then /usr/share/gocode: no go.mod, no module
# proxy, no network. (Elsewhere, set GOCODE to a GOPATH holding google.golang.org/grpc and /protobuf.)
#
#   sh build.sh        (in this folder, or from anywhere: it works in its own folder)
set -eu
cd "$(dirname "$0")"
gocode=${GOCODE:-/usr/share/gocode}
for tool in protoc protoc-gen-go protoc-gen-go-grpc go; do
    command -v "$tool" >/dev/null || { echo "build.sh: no $tool (see the packages above)" >&2; exit 1; }
done
# gRPC 1.33 marshals with github.com/golang/protobuf, which must be 1.4 or later to marshal the messages
# protoc-gen-go 1.28 makes; apt satisfies gRPC's dependency with 1.3 unless told otherwise.
if [ -f "$gocode/src/github.com/golang/protobuf/proto/table_marshal.go" ]; then
    echo "build.sh: $gocode holds github.com/golang/protobuf 1.3, which panics on today's generated messages:" \
        "apt-get install golang-github-golang-protobuf-1-5-dev" >&2
    exit 1
fi

# The protocol (version 2) is the envelope arena/v2/arena.proto and one .proto per game,
# arena/games/<game>/<game>.proto. Where they are: proto/ beside this file holds them all (a bot made by
# `arena new`); else the arena's own source tree (bots/go in it) has the envelope under proto/ and the games
# under its root.
if [ -f proto/arena/v2/arena.proto ]; then
    envelope_root=proto games_root=proto
else
    envelope_root=../../proto games_root=../..
fi

# The generated packages: arenabot/arena/v2 (package arena: the envelope and its gRPC client) and
# arenabot/games/<game> (package <game>: its View and events), for every game's .proto found. The .proto files
# name no Go package, so protoc is told each one's (M options).
out=build/src
rm -rf "$out"
mkdir -p "$out"
games=""
mapping="Marena/v2/arena.proto=arenabot/arena/v2;arena"
for proto in "$games_root"/arena/games/*/*.proto; do
    [ -f "$proto" ] || continue
    game=$(basename "$proto" .proto)
    games="$games arena/games/$game/$game.proto"
    mapping="$mapping,Marena/games/$game/$game.proto=arenabot/games/$game;$game"
done
protoc -I "$envelope_root" --go_out="$out" --go_opt="$mapping" --go-grpc_out="$out" --go-grpc_opt="$mapping" \
    arena/v2/arena.proto
if [ -n "$games" ]; then
    # shellcheck disable=SC2086  # one argument per game
    protoc -I "$games_root" --go_out="$out" --go_opt="$mapping" $games
fi

# CGO_ENABLED=0: a static binary, which needs no C compiler to build nor libc to run; -s -w: without its symbol
# table and debug information (a third smaller; panics still show their stack). A first build compiles gRPC
# and what it needs into Go's build cache (GOCACHE, by default under $HOME/.cache): about 20 s of two cores, and
# about 110 MB of disk at its peak (the cache and the compiler's work files), so a contest's jail must give a
# build at least disk_mb = 128. Later builds take a second.
GO111MODULE=off GOFLAGS= GOPATH="$PWD/build:$gocode" CGO_ENABLED=0 \
    go build -ldflags="-s -w" -o build/arena-bot .
echo "built $PWD/build/arena-bot"
