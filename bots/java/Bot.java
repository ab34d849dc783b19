// A whole arena bot in Java, written from the protocol (version 2: the envelope proto/arena/v2/arena.proto and the
// games' arena/games/cabanga/cabanga.proto and arena/games/lama/lama.proto) and docs/bot-guide.md.
//
// Cabanga!: plays the card that leaves the smallest gap in its row (so others can throw little at it), avoiding
// the colour just played; throws every card it may. L.A.M.A.: plays the lowest legal card, else draws while the
// draw pile is big, else quits. Any other game: the first legal choice (a subset: none). Each answer carries a line
// of debug text saying why, which only the bot's owner sees (debug below).
//
// Build: sh build.sh (protoc, the gRPC Java plugin and javac with Debian's gRPC, protobuf and Netty jars; offline;
// see build.sh). Run by the arena, which sets ARENA_ADDRESS and ARENA_TOKEN, through build/arena-bot, the script
// build.sh writes (the classpath, and the JVM's flags that fit the arena's default limits).

import arena.cabanga.v1.Cabanga;
import arena.lama.v1.Lama;
import arena.v2.ArenaGrpc;
import arena.v2.ArenaOuterClass.Answer;
import arena.v2.ArenaOuterClass.ArenaMessage;
import arena.v2.ArenaOuterClass.BotMessage;
import arena.v2.ArenaOuterClass.DecisionRequest;
import arena.v2.ArenaOuterClass.Hello;
import arena.v2.ArenaOuterClass.MatchStart;
import arena.v2.ArenaOuterClass.Pick;
import arena.v2.ArenaOuterClass.RoundScored;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

public final class Bot {
    /** A request older than its timeout less this is skipped (the arena has applied its default). */
    private static final long SAFETY_MARGIN_MS = 2;

    /** Debug text: a note on a decision for the bot's owner alone ({@code arena replay --seat N}, the contest's replay
     * viewer on their own seat, their submission page); never shown to another seat. It travels in the answer's
     * {@code debug} bytes (UTF-8). The arena keeps at most 1 KiB a decision and 64 KiB a match, and a message may be
     * 64 KiB at most: so {@link #debug} cuts it at 1 KiB, on a character's boundary, and says so. */
    static final int DEBUG_BYTES = 1024;
    static final ByteString DEBUG_CUT = ByteString.copyFromUtf8("... [cut: over 1024 bytes]");

    /** Adds {@code text} to the answer's debug text, a line of its own. */
    static void debug(Answer.Builder answer, String text) {
        ByteString data = answer.getDebug();
        if (data.size() > DEBUG_BYTES - DEBUG_CUT.size() && data.endsWith(DEBUG_CUT)) {
            return; // cut already: keeps no more
        }
        if (!data.isEmpty()) {
            data = data.concat(ByteString.copyFromUtf8("\n"));
        }
        data = data.concat(ByteString.copyFrom(text.getBytes(StandardCharsets.UTF_8))); // a lone surrogate: '?'
        if (data.size() > DEBUG_BYTES) {
            int end = DEBUG_BYTES - DEBUG_CUT.size();
            while (end > 0 && (data.byteAt(end) & 0xC0) == 0x80) {
                end--; // not inside a character
            }
            data = data.substring(0, end).concat(DEBUG_CUT);
        }
        answer.setDebug(data);
    }

    /** A choice of one, and why. */
    record Choice(int pick, String why) { }

    /** The value of a Cabanga! card or play text: "R7" or "R7:left" -> 7. */
    static int value(String text) {
        int end = text.indexOf(':');
        return Integer.parseInt(text.substring(1, end < 0 ? text.length() : end));
    }

    /** Cabanga!: the play whose row gap after it is smallest; a repeated colour costs as much as a gap of 3; and why
     * ("R7:left: gap 2"). */
    static Choice choosePlay(DecisionRequest request, Cabanga.View view) {
        int best = 0;
        int bestCost = Integer.MAX_VALUE;
        String why = "";
        for (int i = 0; i < request.getChoicesCount(); i++) {
            String choice = request.getChoices(i);
            int row = "RBPY".indexOf(choice.charAt(0));
            // a play onto the right pile is compared with the left top, the other pile of the row
            int side = choice.endsWith(":left") ? 1 : 0;
            int gap = Math.abs(value(choice) - value(view.getTops(2 * row + side)));
            boolean again = view.getPreviousColour().equals(choice.substring(0, 1));
            int cost = gap + (again ? 3 : 0);
            if (cost < bestCost) {
                best = i;
                bestCost = cost;
                why = choice + ": gap " + gap + (again ? ", its colour again (+3)" : "");
            }
        }
        return new Choice(best, why);
    }

    /** L.A.M.A.: the choices are the legal cards (lowest first), then "draw" if allowed, then "quit"; and why ("L3:
     * the lowest legal card"). */
    static Choice chooseTurn(DecisionRequest request, Lama.View view) {
        String first = request.getChoices(0);
        String left = view.getDrawSize() + " cards to draw";
        if (!first.equals("draw") && !first.equals("quit")) {
            return new Choice(0, first + ": the lowest legal card"); // a card to play
        }
        if (first.equals("draw") && view.getDrawSize() > 8) {
            return new Choice(0, "draw: no card fits, " + left);
        }
        String why = "quit: no card fits, " + (first.equals("draw") ? "only " + left : "no draw allowed");
        return new Choice(request.getChoicesCount() - 1, why); // quit
    }

    /** Answers one request. The decision kinds are the games' names: Cabanga! "play" and "throw", L.A.M.A. "turn";
     * another game's are answered from the envelope alone. The view is the game's own View message packed in a
     * google.protobuf.Any, whose type URL names its type ("type.googleapis.com/arena.cabanga.v1.View"). */
    static Answer decide(DecisionRequest request) throws InvalidProtocolBufferException {
        Answer.Builder answer = Answer.newBuilder().setRequestId(request.getRequestId());
        Any view = request.getView();
        Choice choice = null;
        if (request.getKind().equals("play") && view.is(Cabanga.View.class)) {
            choice = choosePlay(request, view.unpack(Cabanga.View.class));
        } else if (request.getKind().equals("throw") && view.is(Cabanga.View.class)) {
            for (int i = 0; i < request.getChoicesCount(); i++) {
                answer.addPicks(i); // throw everything
            }
            debug(answer, "throw all " + request.getChoicesCount());
        } else if (request.getKind().equals("turn") && view.is(Lama.View.class)) {
            choice = chooseTurn(request, view.unpack(Lama.View.class));
        } else if (request.getPick() == Pick.PICK_SUBSET) {
            debug(answer, "none"); // any subset is legal, none at all included
        } else if (request.getChoicesCount() > 0) {
            choice = new Choice(0, request.getChoices(0) + ": the first legal choice");
        } else {
            answer.setCrash("a request to pick one of no choices");
        }
        if (choice != null) {
            answer.addPicks(choice.pick());
            debug(answer, choice.why());
        }
        return answer.build();
    }

    /** Answers one request, or says why it could not: a crash answer makes the arena apply the request's default
     * at once and log the reason, and the bot goes on with its next request. */
    static Answer answer(DecisionRequest request) {
        try {
            return decide(request);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            e.printStackTrace();
            return Answer.newBuilder().setRequestId(request.getRequestId()).setCrash(e.toString()).build();
        }
    }

    /** The events (of the game, and the shared SeatFaulted, RoundScored, MatchOver) are Any too; this bot needs
     * none but the scores, which it logs. A bot skips the types it does not know. */
    static void logScores(List<Any> events) {
        for (Any event : events) {
            if (event.is(RoundScored.class)) {
                try {
                    RoundScored scored = event.unpack(RoundScored.class);
                    System.err.println("round " + scored.getRound() + ": totals " + scored.getTotalsList());
                } catch (InvalidProtocolBufferException e) {
                    System.err.println("a RoundScored that does not decode: " + e);
                }
            }
        }
    }

    /** Decides a made-up request of each kind once, before the hello: the JVM loads and links the classes of the
     * views and the decisions now, while the arena waits for the connection (15 s), not at the first real request,
     * whose deadline runs (the first decision takes a few hundred milliseconds more without this). */
    static void warmUp() throws InvalidProtocolBufferException {
        Cabanga.View cabanga = Cabanga.View.newBuilder().addAllTops(List.of("G1", "G3", "G5", "G7", "G12", "G14",
                "G16", "G18")).setPreviousColour("R").build();
        Lama.View lama = Lama.View.newBuilder().setDrawSize(20).build();
        List<DecisionRequest> requests = List.of(
                DecisionRequest.newBuilder().setKind("play").setPick(Pick.PICK_ONE).addChoices("R2:left")
                        .addChoices("B13:right").setView(Any.pack(cabanga)).build(),
                DecisionRequest.newBuilder().setKind("throw").setPick(Pick.PICK_SUBSET).addChoices("R9")
                        .setView(Any.pack(cabanga)).build(),
                DecisionRequest.newBuilder().setKind("turn").setPick(Pick.PICK_ONE).addChoices("draw")
                        .addChoices("quit").setView(Any.pack(lama)).build());
        for (DecisionRequest request : requests) {
            DecisionRequest.parseFrom(request.toByteString()); // as it comes off the wire
            BotMessage.newBuilder().setAnswer(answer(request)).build().toByteString();
        }
    }

    // ----------------------------------------------------------------------------------------------- the socket

    /** grpc-java's Netty transport reaches a Unix socket only with Netty's native epoll library, which Debian does
     * not ship; Java (16 and later) opens one itself. So the bot relays a port of its own loopback (in the jail,
     * a network of its own with nothing else on it) to the arena's socket, and gRPC dials that port. Returns the
     * port. Each connection to it is one connection to the socket, relayed both ways by two threads. */
    static int relay(String path) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    SocketChannel tcp = server.accept();
                    tcp.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    SocketChannel unix = SocketChannel.open(StandardProtocolFamily.UNIX);
                    unix.connect(UnixDomainSocketAddress.of(path));
                    pump(tcp, unix);
                    pump(unix, tcp);
                }
            } catch (IOException e) {
                System.err.println("arena: the relay to " + path + " failed: " + e);
            }
        }, "relay");
        acceptor.setDaemon(true);
        acceptor.start();
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    /** Copies what {@code from} reads to {@code to} until {@code from} ends, then ends {@code to}'s output. */
    static void pump(SocketChannel from, SocketChannel to) {
        Thread thread = new Thread(() -> {
            ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024);
            try {
                while (from.read(buffer) >= 0) {
                    buffer.flip();
                    while (buffer.hasRemaining()) {
                        to.write(buffer);
                    }
                    buffer.clear();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }, "relay-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** ARENA_ADDRESS is "unix:/path/to/socket" (the arena's usual one) or "host:port" (a remote bot's). One event
     * loop thread, which also runs the callbacks (directExecutor): the bot needs no more. */
    static ManagedChannel dial(String address) throws IOException {
        NettyChannelBuilder builder;
        if (address.startsWith("unix:")) {
            String path = address.substring("unix:".length());
            path = path.startsWith("//") ? path.substring(2) : path;
            int port = relay(path);
            builder = NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } else {
            builder = NettyChannelBuilder.forTarget(address);
        }
        return builder.usePlaintext().directExecutor().disableRetry()
                .eventLoopGroup(new NioEventLoopGroup(1, new DefaultThreadFactory("grpc-loop", true)))
                .channelType(NioSocketChannel.class)
                .build();
    }

    // ------------------------------------------------------------------------------------------------ the stream

    /** The arena's stream, from the bot's side. gRPC calls it on its event loop's one thread (directExecutor), and
     * it decides there too: a message handed to another thread would wait for that thread to wake up, two such
     * waits per request (the answer's write goes back to the event loop), which double the bot's latency on a
     * busy machine. While it decides nothing else needs the loop: the arena's next messages wait in the socket. */
    static final class Session implements StreamObserver<ArenaMessage> {
        /** The process's exit status, once the stream is over. */
        final CompletableFuture<Integer> done = new CompletableFuture<>();
        private final StreamObserver<BotMessage> outbox;
        // A request that waited in the stream while the bot was busy is skipped once its time has run out: its age
        // comes from the arena's clock (sent_time_ms) and the offset between the clocks measured at the Welcome.
        private long offsetMs;
        private boolean haveOffset;
        private boolean closed;

        Session(ArenaGrpc.ArenaStub stub, String token) {
            outbox = stub.play(this);
            Hello hello = Hello.newBuilder().setToken(token).setProtocolVersion(2).setAgent("arena-java-example")
                    .build();
            outbox.onNext(BotMessage.newBuilder().setHello(hello).build());
        }

        @Override
        public void onNext(ArenaMessage message) {
            switch (message.getBodyCase()) {
                case WELCOME -> {
                    if (message.getWelcome().getArenaTimeMs() != 0) {
                        offsetMs = System.currentTimeMillis() - message.getWelcome().getArenaTimeMs();
                        haveOffset = true;
                    }
                }
                case MATCH_START -> {
                    MatchStart start = message.getMatchStart();
                    System.err.println("match " + start.getMatchId() + " of " + start.getGame() + ": seat "
                            + start.getSeat());
                }
                case REQUEST -> {
                    DecisionRequest request = message.getRequest();
                    logScores(request.getEventsList());
                    if (haveOffset && request.getSentTimeMs() != 0) {
                        long age = System.currentTimeMillis() - offsetMs - request.getSentTimeMs();
                        if (age > request.getTimeoutMs() - SAFETY_MARGIN_MS) {
                            return; // too late to count: the arena has applied the default already
                        }
                    }
                    outbox.onNext(BotMessage.newBuilder().setAnswer(answer(request)).build());
                }
                case MATCH_END -> logScores(message.getMatchEnd().getEventsList());
                case GOODBYE -> finish(0);
                default -> { } // a message of a newer arena: skipped
            }
        }

        @Override
        public void onError(Throwable error) {
            Status status = Status.fromThrowable(error);
            if (status.getCode() != Status.Code.CANCELLED) {
                System.err.println("arena: stream failed: " + status);
            }
            closed = true; // the call is over: no half-close
            done.complete(status.getCode() == Status.Code.CANCELLED ? 0 : 1);
        }

        @Override
        public void onCompleted() {
            finish(0);
        }

        /** Ends the bot's side of the stream (once: the arena may close its side after its Goodbye). */
        private void finish(int status) {
            if (!closed) {
                closed = true;
                outbox.onCompleted();
            }
            done.complete(status);
        }
    }

    public static void main(String[] args) throws Exception {
        String address = System.getenv("ARENA_ADDRESS");
        String token = System.getenv("ARENA_TOKEN");
        if (address == null || address.isEmpty() || token == null || token.isEmpty()) {
            System.err.println("arena: ARENA_ADDRESS and ARENA_TOKEN must be set");
            System.exit(2);
        }
        warmUp();
        ManagedChannel channel = dial(address);
        Session session = new Session(ArenaGrpc.newStub(channel), token);
        int status = session.done.get();
        channel.shutdownNow();
        System.exit(status);
    }
}
