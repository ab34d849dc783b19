// A whole arena bot in C++, for both games, written from proto/arena/v1/arena.proto and docs/bot-guide.md.
//
// Cabanga!: plays the card that leaves the smallest gap in its row (so others can throw little at it), avoiding
// the colour just played; throws every card it may. L.A.M.A.: plays the lowest legal card, else draws while the
// draw pile is big, else quits.
//
// Build: cmake -S bots/cpp -B bots/cpp/build && cmake --build bots/cpp/build
// Run by the arena, which sets ARENA_ADDRESS and ARENA_TOKEN.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "arena/v1/arena.grpc.pb.h"

namespace pb = arena::v1;

namespace {

// The value of a Cabanga! card or play text: "R7" or "R7:left" -> 7.
int Value(const std::string& text) { return std::atoi(text.c_str() + 1); }

// Cabanga!: the play whose row gap after it is smallest; a repeated colour costs as much as a gap of 3.
int ChoosePlay(const pb::DecisionRequest& request) {
  const pb::CabangaView& view = request.cabanga();
  const std::string rows = "RBPY";
  int best = 0;
  int best_cost = 1 << 30;
  for (int i = 0; i < request.choices_size(); ++i) {
    const std::string& choice = request.choices(i);
    const size_t row = rows.find(choice[0]);
    const bool left = choice.find(":left") != std::string::npos;
    const int other = Value(view.tops(static_cast<int>(2 * row + (left ? 1 : 0))));
    const int gap = std::abs(Value(choice) - other);
    const int cost = gap + (view.previous_colour() == choice.substr(0, 1) ? 3 : 0);
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  return best;
}

// L.A.M.A.: the choices are the legal cards (lowest first), then "draw" if allowed, then "quit".
int ChooseTurn(const pb::DecisionRequest& request) {
  const std::string& first = request.choices(0);
  if (first != "draw" && first != "quit") return 0;  // a card to play
  if (first == "draw" && request.lama().draw_size() > 8) return 0;
  return request.choices_size() - 1;  // quit
}

void Answer(const pb::DecisionRequest& request, pb::Answer* answer) {
  answer->set_request_id(request.request_id());
  switch (request.kind()) {
    case pb::DECISION_KIND_PLAY:
      answer->add_picks(ChoosePlay(request));
      break;
    case pb::DECISION_KIND_THROW:
      for (int i = 0; i < request.choices_size(); ++i) answer->add_picks(i);  // throw everything
      break;
    case pb::DECISION_KIND_TURN:
      answer->add_picks(ChooseTurn(request));
      break;
    default:
      answer->set_crash("unknown decision kind " + std::to_string(request.kind()));
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
  hello.mutable_hello()->set_protocol_version(1);
  hello.mutable_hello()->set_agent("arena-cpp-example");
  if (!stream->Write(hello)) {
    std::cerr << "arena: cannot send the hello\n";
    return 1;
  }
  pb::ArenaMessage message;
  while (stream->Read(&message)) {
    if (message.has_request()) {
      pb::BotMessage reply;
      Answer(message.request(), reply.mutable_answer());
      if (!stream->Write(reply)) break;
    } else if (message.has_match_start()) {
      std::cerr << "match " << message.match_start().match_id() << ": seat " << message.match_start().seat()
                << "\n";
    } else if (message.has_goodbye()) {
      break;
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  return status.ok() || status.error_code() == grpc::StatusCode::CANCELLED ? 0 : 1;
}
