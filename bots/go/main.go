// A whole arena bot in Go, written from the protocol (version 2: the envelope proto/arena/v2/arena.proto and the
// games' arena/games/cabanga/cabanga.proto and arena/games/lama/lama.proto) and docs/bot-guide.md.
//
// Cabanga!: plays the card that leaves the smallest gap in its row (so others can throw little at it), avoiding
// the colour just played; throws every card it may. L.A.M.A.: plays the lowest legal card, else draws while the
// draw pile is big, else quits. Any other game: the first legal choice (a subset: none). Each answer carries a line
// of debug text saying why, which only the bot's owner sees (debug below).
//
// Build: sh build.sh (protoc, protoc-gen-go, protoc-gen-go-grpc and Go with Debian's gRPC; offline; see build.sh)
// Run by the arena, which sets ARENA_ADDRESS and ARENA_TOKEN.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	// The code build.sh generates from the .proto files (into build/src, a GOPATH folder).
	pb "arenabot/arena/v2"
	"arenabot/games/cabanga"
	"arenabot/games/lama"
)

// safetyMarginMs: a request older than its timeout less this is skipped (the arena has applied its default).
const safetyMarginMs = 2

// Debug text: a note on this decision for the bot's owner alone (`arena replay --seat N`, the contest's replay
// viewer on their own seat, their submission page); never shown to another seat. It travels in the answer's
// Debug bytes, meant as UTF-8 (bytes that are not are shown replaced, never a fault). The arena keeps at most
// 1 KiB a decision and 64 KiB a match, and a message may be 64 KiB at most: so debug cuts it at 1 KiB, on a
// character's boundary, and says so. Several notes join, a line each.
const (
	debugBytes = 1024
	debugCut   = "... [cut: over 1024 bytes]"
)

// debug adds a note, formatted as fmt.Sprintf does, to the answer's debug text.
func debug(answer *pb.Answer, format string, args ...interface{}) {
	data := answer.Debug
	if len(data) > debugBytes-len(debugCut) && bytes.HasSuffix(data, []byte(debugCut)) {
		return // cut already: keeps no more
	}
	if len(data) > 0 {
		data = append(data, '\n')
	}
	data = append(data, fmt.Sprintf(format, args...)...)
	if len(data) > debugBytes {
		end := debugBytes - len(debugCut)
		for end > 0 && !utf8.RuneStart(data[end]) {
			end-- // not inside a character
		}
		data = append(data[:end], debugCut...)
	}
	answer.Debug = data
}

// value of a Cabanga! card or play text: "R7" or "R7:left" -> 7.
func value(text string) int {
	end := strings.IndexByte(text, ':')
	if end < 0 {
		end = len(text)
	}
	v, _ := strconv.Atoi(text[1:end])
	return v
}

// choosePlay (Cabanga!): the play whose row gap after it is smallest; a repeated colour costs as much as a gap
// of 3. It returns the reason too ("R7:left: gap 2").
func choosePlay(request *pb.DecisionRequest, view *cabanga.View) (uint32, string) {
	best, bestCost, why := 0, 1<<30, ""
	for i, choice := range request.Choices {
		row := strings.IndexByte("RBPY", choice[0])
		side := 0
		if strings.HasSuffix(choice, ":left") {
			side = 1 // the other pile of the row: a play onto the right pile is compared with the left top
		}
		gap := value(choice) - value(view.Tops[2*row+side])
		if gap < 0 {
			gap = -gap
		}
		cost, again := gap, ""
		if view.PreviousColour == choice[:1] {
			cost, again = cost+3, ", its colour again (+3)"
		}
		if cost < bestCost {
			best, bestCost = i, cost
			why = fmt.Sprintf("%s: gap %d%s", choice, gap, again)
		}
	}
	return uint32(best), why
}

// chooseTurn (L.A.M.A.): the choices are the legal cards (lowest first), then "draw" if allowed, then "quit". It
// returns the reason too ("L3: the lowest legal card").
func chooseTurn(request *pb.DecisionRequest, view *lama.View) (uint32, string) {
	first := request.Choices[0]
	if first != "draw" && first != "quit" {
		return 0, first + ": the lowest legal card" // a card to play
	}
	if first == "draw" && view.DrawSize > 8 {
		return 0, fmt.Sprintf("draw: no card fits, %d cards to draw", view.DrawSize)
	}
	why := "quit: no card fits, no draw allowed"
	if first == "draw" {
		why = fmt.Sprintf("quit: no card fits, only %d cards to draw", view.DrawSize)
	}
	return uint32(len(request.Choices) - 1), why // quit
}

// unpack the view: the game's own View message packed in a google.protobuf.Any, whose type URL names View's
// type ("type.googleapis.com/arena.cabanga.v1.View"). Else it sets a crash on the answer, so that the arena
// applies the request's default at once and logs why.
func unpack(request *pb.DecisionRequest, view proto.Message, answer *pb.Answer) bool {
	if err := request.View.UnmarshalTo(view); err != nil {
		answer.Crash = fmt.Sprintf("expected a %s view, not %q: %v", view.ProtoReflect().Descriptor().FullName(),
			request.View.GetTypeUrl(), err)
		return false
	}
	return true
}

// decide answers one request. The decision kinds are the games' names: Cabanga! "play" and "throw", L.A.M.A.
// "turn"; another game's are answered from the envelope alone.
func decide(request *pb.DecisionRequest) *pb.Answer {
	answer := &pb.Answer{RequestId: request.RequestId}
	why := ""
	switch {
	case request.Kind == "play" && request.View.MessageIs(&cabanga.View{}):
		view := &cabanga.View{}
		if unpack(request, view, answer) {
			var pick uint32
			pick, why = choosePlay(request, view)
			answer.Picks = []uint32{pick}
		}
	case request.Kind == "throw" && request.View.MessageIs(&cabanga.View{}):
		for i := range request.Choices {
			answer.Picks = append(answer.Picks, uint32(i)) // throw everything
		}
		why = fmt.Sprintf("throw all %d", len(request.Choices))
	case request.Kind == "turn" && request.View.MessageIs(&lama.View{}):
		view := &lama.View{}
		if unpack(request, view, answer) {
			var pick uint32
			pick, why = chooseTurn(request, view)
			answer.Picks = []uint32{pick}
		}
	case request.Pick == pb.Pick_PICK_SUBSET:
		why = "none" // any subset is legal, none at all included
	case len(request.Choices) > 0:
		answer.Picks = []uint32{0} // the first legal choice
		why = request.Choices[0] + ": the first legal choice"
	default:
		answer.Crash = "a request to pick one of no choices"
	}
	if why != "" {
		debug(answer, "%s", why)
	}
	return answer
}

// logScores: the events (of the game, and the shared SeatFaulted, RoundScored, MatchOver) are Any too; this bot
// needs none but the scores, which it logs. A bot skips the types it does not know.
func logScores(events []*anypb.Any) {
	for _, event := range events {
		scored := &pb.RoundScored{}
		if event.MessageIs(scored) && event.UnmarshalTo(scored) == nil {
			fmt.Fprintf(os.Stderr, "round %d: totals %v\n", scored.Round, scored.Totals)
		}
	}
}

// dial: ARENA_ADDRESS is "unix:/path/to/socket" (the arena's usual one) or "host:port". This gRPC (1.33,
// Debian's) has no resolver for "unix:", so the bot dials the socket itself.
func dial(address string) (*grpc.ClientConn, error) {
	dialer := func(ctx context.Context, target string) (net.Conn, error) {
		network := "tcp"
		if strings.HasPrefix(target, "unix:") {
			network, target = "unix", strings.TrimPrefix(strings.TrimPrefix(target, "unix:"), "//")
		}
		return (&net.Dialer{}).DialContext(ctx, network, target)
	}
	return grpc.Dial(address, grpc.WithInsecure(), grpc.WithContextDialer(dialer), grpc.WithDisableRetry())
}

func main() {
	address, token := os.Getenv("ARENA_ADDRESS"), os.Getenv("ARENA_TOKEN")
	if address == "" || token == "" {
		fmt.Fprintln(os.Stderr, "arena: ARENA_ADDRESS and ARENA_TOKEN must be set")
		os.Exit(2)
	}
	conn, err := dial(address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "arena: cannot connect:", err)
		os.Exit(1)
	}
	defer conn.Close()
	stream, err := pb.NewArenaClient(conn).Play(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "arena: cannot open the stream:", err)
		os.Exit(1)
	}
	hello := &pb.Hello{Token: token, ProtocolVersion: 2, Agent: "arena-go-example"}
	if err := stream.Send(&pb.BotMessage{Body: &pb.BotMessage_Hello{Hello: hello}}); err != nil {
		fmt.Fprintln(os.Stderr, "arena: cannot send the hello:", err)
		os.Exit(1)
	}
	// A request that waited in the stream while the bot was busy is skipped once its time has run out: its age
	// comes from the arena's clock (sent_time_ms) and the offset between the clocks measured at the Welcome.
	var offsetMs int64
	haveOffset := false
	nowMs := func() int64 { return time.Now().UnixMilli() }
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			if status.Code(err) == codes.Canceled {
				break
			}
			fmt.Fprintln(os.Stderr, "arena: stream failed:", err)
			os.Exit(1)
		}
		switch body := message.Body.(type) {
		case *pb.ArenaMessage_Welcome:
			if body.Welcome.ArenaTimeMs != 0 {
				offsetMs, haveOffset = nowMs()-int64(body.Welcome.ArenaTimeMs), true
			}
		case *pb.ArenaMessage_MatchStart:
			start := body.MatchStart
			fmt.Fprintf(os.Stderr, "match %s of %s: seat %d\n", start.MatchId, start.Game, start.Seat)
		case *pb.ArenaMessage_Request:
			request := body.Request
			logScores(request.Events)
			if haveOffset && request.SentTimeMs != 0 {
				if age := nowMs() - offsetMs - int64(request.SentTimeMs); age > int64(request.TimeoutMs)-safetyMarginMs {
					continue // too late to count: the arena has applied the default already
				}
			}
			if err := stream.Send(&pb.BotMessage{Body: &pb.BotMessage_Answer{Answer: decide(request)}}); err != nil {
				fmt.Fprintln(os.Stderr, "arena: cannot send an answer:", err)
				os.Exit(1)
			}
		case *pb.ArenaMessage_MatchEnd:
			logScores(body.MatchEnd.Events)
		case *pb.ArenaMessage_Goodbye:
			_ = stream.CloseSend()
			return
		}
	}
	_ = stream.CloseSend()
}
