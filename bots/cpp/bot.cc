// A whole arena bot in C++, for both games, written from the protocol (version 2: the envelope
// proto/arena/v2/arena.proto and the games' arena/games/cabanga/cabanga.proto and arena/games/lama/lama.proto)
// and docs/bot-guide.md.
//
// Cabanga!: plays the card that leaves the smallest gap in its row (so others can throw little at it), avoiding
// the colour just played; throws every card it may. L.A.M.A.: plays the lowest legal card, else draws while the
// draw pile is big, else quits. Any other game: the first legal choice (or, where it may pick any set, none),
// from the envelope alone: the request's choices and pick are the same for every game. Each answer carries a line
// of debug text saying why, which only the bot's owner sees (Debug below).
//
// Build: cmake -S bots/cpp -B bots/cpp/build && cmake --build bots/cpp/build
// Run by the arena, which sets ARENA_ADDRESS and ARENA_TOKEN.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "arena/games/cabanga/cabanga.pb.h"
#include "arena/games/lama/lama.pb.h"
#include "arena/v2/arena.grpc.pb.h"

namespace pb = arena::v2;
namespace cabanga = arena::cabanga::v1;
namespace lama = arena::lama::v1;

namespace {

// Debug text: a note on this decision for the bot's owner alone (`arena replay --seat N`, the contest's replay
// viewer on their own seat, their submission page); never shown to another seat. It travels in the answer's
// `debug` bytes, meant as UTF-8 (bytes that are not are shown replaced, never a fault). The arena keeps at most
// 1 KiB a decision and 64 KiB a match, and a message may be 64 KiB at most: so this cuts it at 1 KiB, on a
// character's boundary, and says so. Several notes join, a line each.
constexpr size_t kDebugBytes = 1024;
const std::string kDebugCut = "... [cut: over 1024 bytes]";

void Debug(pb::Answer* answer, const std::string& text) {
  std::string* debug = answer->mutable_debug();
  if (debug->size() > kDebugBytes - kDebugCut.size() &&
      debug->compare(debug->size() - kDebugCut.size(), kDebugCut.size(), kDebugCut) == 0) {
    return;  // cut already: keeps no more
  }
  if (!debug->empty()) debug->push_back('\n');
  debug->append(text);
  if (debug->size() > kDebugBytes) {
    size_t end = kDebugBytes - kDebugCut.size();
    while (end > 0 && (static_cast<unsigned char>((*debug)[end]) & 0xC0) == 0x80) --end;  // not inside a character
    debug->resize(end);
    debug->append(kDebugCut);
  }
}

// The value of a Cabanga! card or play text: "R7" or "R7:left" -> 7.
int Value(const std::string& text) { return std::atoi(text.c_str() + 1); }

// Cabanga!: the play whose row gap after it is smallest; a repeated colour costs as much as a gap of 3. ``why``
// gets the reason ("R7:left: gap 2").
int ChoosePlay(const pb::DecisionRequest& request, const cabanga::View& view, std::string* why) {
  const std::string rows = "RBPY";
  int best = 0;
  int best_cost = 1 << 30;
  for (int i = 0; i < request.choices_size(); ++i) {
    const std::string& choice = request.choices(i);
    const size_t row = rows.find(choice[0]);
    const bool left = choice.find(":left") != std::string::npos;
    const int other = Value(view.tops(static_cast<int>(2 * row + (left ? 1 : 0))));
    const int gap = std::abs(Value(choice) - other);
    const bool again = view.previous_colour() == choice.substr(0, 1);
    const int cost = gap + (again ? 3 : 0);
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
      *why = choice + ": gap " + std::to_string(gap) + (again ? ", its colour again (+3)" : "");
    }
  }
  return best;
}

// L.A.M.A.: the choices are the legal cards (lowest first), then "draw" if allowed, then "quit". ``why`` gets the
// reason ("L3: the lowest legal card").
int ChooseTurn(const pb::DecisionRequest& request, const lama::View& view, std::string* why) {
  const std::string& first = request.choices(0);
  const std::string left = std::to_string(view.draw_size()) + " cards to draw";
  if (first != "draw" && first != "quit") {  // a card to play
    *why = first + ": the lowest legal card";
    return 0;
  }
  if (first == "draw" && view.draw_size() > 8) {
    *why = "draw: no card fits, " + left;
    return 0;
  }
  *why = "quit: no card fits, " + (first == "draw" ? "only " + left : "no draw allowed");
  return request.choices_size() - 1;  // quit
}

// The view is the game's own View message packed in a google.protobuf.Any: unpack it when its type URL names
// View's type ("type.googleapis.com/arena.cabanga.v1.View"). Else answer a crash, so that the arena applies
// the request's default at once and logs why.
template <typename View>
bool Unpack(const pb::DecisionRequest& request, View* view, pb::Answer* answer) {
  if (request.view().Is<View>() && request.view().UnpackTo(view)) return true;
  answer->set_crash("expected a " + View::descriptor()->full_name() + " view, not " + request.view().type_url());
  return false;
}

// The decision kinds are the games' names: Cabanga! "play" and "throw", L.A.M.A. "turn". ``game`` is the
// match's, from its MatchStart.
void Answer(const std::string& game, const pb::DecisionRequest& request, pb::Answer* answer) {
  answer->set_request_id(request.request_id());
  const std::string& kind = request.kind();
  std::string why;
  if (game == "cabanga" && kind == "play") {
    cabanga::View view;
    if (Unpack(request, &view, answer)) answer->add_picks(ChoosePlay(request, view, &why));
  } else if (game == "cabanga" && kind == "throw") {
    for (int i = 0; i < request.choices_size(); ++i) answer->add_picks(i);  // throw everything
    why = "throw all " + std::to_string(request.choices_size());
  } else if (game == "lama" && kind == "turn") {
    lama::View view;
    if (Unpack(request, &view, answer)) answer->add_picks(ChooseTurn(request, view, &why));
  } else if (request.pick() == pb::PICK_ONE) {
    answer->add_picks(0);  // a game this bot does not know: its first legal choice
    if (request.choices_size() > 0) why = request.choices(0) + ": the first legal choice";
  } else {
    why = "none";  // PICK_SUBSET: the empty set, always legal
  }
  if (!why.empty()) Debug(answer, why);
}

// The events (of the game, and the shared SeatFaulted, RoundScored, MatchOver) are Any too; this bot needs none
// but the scores, which it logs. A bot skips the types it does not know.
void LogScores(const google::protobuf::RepeatedPtrField<google::protobuf::Any>& events) {
  for (const google::protobuf::Any& event : events) {
    pb::RoundScored scored;
    if (event.UnpackTo(&scored)) {
      std::cerr << "round " << scored.round() << ": totals";
      for (int total : scored.totals()) std::cerr << " " << total;
      std::cerr << "\n";
    }
  }
}

}  // namespace

int main() {
  const char* address = std::getenv("ARENA_ADDRESS");
  const char* token = std::getenv("ARENA_TOKEN");
  if (address == nullptr || token == nullptr) {
    std::cerr << "arena: ARENA_ADDRESS and ARENA_TOKEN must be set\n";
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetInt("grpc.enable_retries", 0);
  args.SetInt("grpc.enable_http_proxy", 0);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  auto stub = pb::Arena::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);

  pb::BotMessage hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_protocol_version(2);
  hello.mutable_hello()->set_agent("arena-cpp-example");
  if (!stream->Write(hello)) {
    std::cerr << "arena: cannot send the hello\n";
    return 1;
  }
  pb::ArenaMessage message;
  std::string game;
  while (stream->Read(&message)) {
    if (message.has_request()) {
      LogScores(message.request().events());
      pb::BotMessage reply;
      Answer(game, message.request(), reply.mutable_answer());
      if (!stream->Write(reply)) break;
    } else if (message.has_match_start()) {
      const pb::MatchStart& start = message.match_start();
      game = start.game();
      std::cerr << "match " << start.match_id() << " of " << start.game() << ": seat " << start.seat() << "\n";
    } else if (message.has_match_end()) {
      LogScores(message.match_end().events());
    } else if (message.has_goodbye()) {
      break;
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  return status.ok() || status.error_code() == grpc::StatusCode::CANCELLED ? 0 : 1;
}
