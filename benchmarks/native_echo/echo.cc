// The bare stream's server in C++: the same ping-pong as benchmarks/protocol.py's grpc.aio server, on gRPC's
// callback API, to measure what a native seat would cost the arena per round trip (benchmarks/native_echo.py
// builds and runs it). Usage: echo ADDRESS ROUNDS; prints "ready", then the CPU per round trip when the stream ends.
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "arena.grpc.pb.h"

namespace {

int rounds = 0;
std::mutex mu;
std::condition_variable cv;
bool finished = false;

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// One stream: read the hello, then write a request and read its answer, ROUNDS times; then a goodbye.
class Reactor : public grpc::ServerBidiReactor<arena::v2::BotMessage, arena::v2::ArenaMessage> {
 public:
  Reactor() { StartRead(&in_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    out_.Clear();
    if (sent_ >= rounds) {
      out_.mutable_goodbye()->set_reason("done");
      last_ = true;
    } else {
      auto* request = out_.mutable_request();
      request->set_request_id(++sent_);
      request->add_choices("R7:left");
    }
    StartWrite(&out_);
  }
  void OnWriteDone(bool ok) override {
    if (last_ || !ok) {
      Finish(grpc::Status::OK);
      return;
    }
    StartRead(&in_);
  }
  void OnDone() override {
    {
      std::lock_guard<std::mutex> lock(mu);
      finished = true;
    }
    cv.notify_all();
    delete this;
  }

 private:
  arena::v2::BotMessage in_;
  arena::v2::ArenaMessage out_;
  int sent_ = 0;
  bool last_ = false;
};

class Service : public arena::v2::Arena::CallbackService {
  grpc::ServerBidiReactor<arena::v2::BotMessage, arena::v2::ArenaMessage>* Play(
      grpc::CallbackServerContext*) override {
    return new Reactor();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: echo ADDRESS ROUNDS\n");
    return 2;
  }
  rounds = std::atoi(argv[2]);
  Service service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "cannot listen on %s\n", argv[1]);
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [] { return finished; });
  }
  getrusage(RUSAGE_SELF, &after);
  double user = seconds(after.ru_utime) - seconds(before.ru_utime);
  double kernel = seconds(after.ru_stime) - seconds(before.ru_stime);
  std::printf("%.3f %.3f\n", user * 1e6 / rounds, kernel * 1e6 / rounds);
  std::fflush(stdout);
  server->Shutdown();
  return 0;
}
