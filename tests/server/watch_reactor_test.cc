// WatchJob streams over real gRPC on loopback: a real in-process lm-server, a scripted worker
// speaking the real WorkerService, and many concurrent streams on gRPC's callback client.
#include "server/watch_reactor.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "proto/watch_job_reactor.h"
#include "server/server.h"
#include "tests/client/scripted_worker.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
constexpr absl::Duration kReactorWait = absl::Seconds(60);

// Counts over every stream of a test, to wait on.
struct Counts {
  absl::Mutex mu;
  int live ABSL_GUARDED_BY(mu) = 0;      // Streams that have seen the RUNNING event.
  int finished ABSL_GUARDED_BY(mu) = 0;  // Streams that have ended.
  bool Await(int Counts::*field, int n) {
    absl::MutexLock lock(&mu);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return this->*field >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&ready), kReactorWait);
  }
};

// One WatchJob stream from after_seq 0 that records every event's seq and its final status.
class Stream final : public WatchJobReactor {
 public:
  Stream(v1::JobService::Stub* stub, const std::string& job_id, Counts* counts) : counts_(counts) {
    v1::WatchJobRequest request;
    request.set_job_id(job_id);
    Start(stub, request);
  }
  // Read after the stream finished (Counts::finished covers it).
  const std::vector<int64_t>& seqs() const { return seqs_; }
  const std::vector<int64_t>& steps() const { return steps_; }
  grpc::StatusCode code() const { return status_.error_code(); }

 private:
  void OnEvent(const v1::JobEvent& event) override {
    seqs_.push_back(event.seq());
    if (event.has_metrics()) steps_.push_back(event.metrics().step());
    if (event.has_state_changed() && event.state_changed().state() == v1::RUNNING) {
      absl::MutexLock lock(&counts_->mu);
      ++counts_->live;
    }
  }
  void OnEnd(const grpc::Status& status) override {
    absl::MutexLock lock(&counts_->mu);
    status_ = status;
    ++counts_->finished;
  }

  Counts* const counts_;
  std::vector<int64_t> seqs_;
  std::vector<int64_t> steps_;
  grpc::Status status_;
};

class WatchReactorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.data_dir = dir_.string();
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = "127.0.0.1:" + std::to_string(server_->port());
    for (int i = 0; i < 4; ++i) {
      grpc::ChannelArguments args;
      args.SetInt("lmtrain.test.channel", i);  // Distinct args: a connection each.
      stubs_.push_back(v1::JobService::NewStub(
          grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args)));
    }
    worker_ = std::make_unique<testing::ScriptedWorker>(address_, "w", 1,
                                                        std::map<std::string, std::string>{});
    ASSERT_TRUE(worker_->Register().ok());
  }
  void TearDown() override {
    CloseAll();
    if (server_ != nullptr) server_->Shutdown();
    server_.reset();
    fs::remove_all(dir_);
  }

  // A job the scripted worker runs (RUNNING).
  std::string RunningJob() {
    SubmitRequest r = folder_.Request();
    v1::SubmitJobRequest req;
    req.set_spec_yaml(r.spec_yaml);
    req.set_source_name(r.source_name);
    req.set_base_dir(r.base_dir);
    v1::SubmitJobResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stubs_[0]->SubmitJob(&ctx, req, &resp).ok());
    EXPECT_TRUE(worker_->WaitForAssignment().ok());
    EXPECT_TRUE(worker_->Report({testing::ScriptedWorker::Started()}).ok());
    return resp.job_id();
  }
  void Open(int n, const std::string& id) {
    for (int i = 0; i < n; ++i) {
      streams_.push_back(std::make_unique<Stream>(stubs_[i % stubs_.size()].get(), id, &counts_));
    }
  }
  // Cancels what still runs and waits until gRPC is done with every stream.
  void CloseAll() {
    for (auto& s : streams_) s->Cancel();
    ASSERT_TRUE(counts_.Await(&Counts::finished, static_cast<int>(streams_.size())));
  }
  // Waits (on the server's own count) until `n` watches are open.
  bool AwaitWatchers(int n) {
    const absl::Time deadline = absl::Now() + kReactorWait;
    while (server_->watch_streams() != n) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  fs::path dir_ = fs::temp_directory_path() / ("lmtrain-watch-" + std::to_string(::getpid()));
  testing::JobFolder folder_;
  std::unique_ptr<Server> server_;
  std::string address_;
  std::vector<std::unique_ptr<v1::JobService::Stub>> stubs_;
  std::unique_ptr<testing::ScriptedWorker> worker_;
  Counts counts_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

TEST_F(WatchReactorTest, TwoHundredWatchersEachGetEveryEventInOrderOnce) {
  constexpr int kWatchers = 200;
  constexpr int kSteps = 20;
  const std::string id = RunningJob();
  Open(kWatchers, id);
  ASSERT_TRUE(counts_.Await(&Counts::live, kWatchers));
  EXPECT_EQ(server_->watch_streams(), kWatchers);
  for (int step = 1; step <= kSteps; ++step) {
    ASSERT_TRUE(worker_->Report({testing::ScriptedWorker::Metrics(step, kSteps, 1.0, 10)}).ok());
  }
  ASSERT_TRUE(worker_->Report({testing::ScriptedWorker::Exited(0, "")}).ok());
  ASSERT_TRUE(counts_.Await(&Counts::finished, kWatchers));  // Each ends at SUCCEEDED.
  std::vector<int64_t> all;
  for (int64_t s = 1; s <= streams_[0]->seqs().back(); ++s) all.push_back(s);
  std::vector<int64_t> steps;
  for (int64_t s = 1; s <= kSteps; ++s) steps.push_back(s);
  for (const auto& s : streams_) {
    EXPECT_EQ(s->code(), grpc::StatusCode::OK);
    EXPECT_EQ(s->seqs(), all);
    EXPECT_EQ(s->steps(), steps);
  }
  EXPECT_GE(all.size(), 2u + kSteps + 1);  // QUEUED, RUNNING, the metrics, SUCCEEDED.
  EXPECT_TRUE(AwaitWatchers(0));
}

TEST_F(WatchReactorTest, AClientThatCancelsFreesItsWatch) {
  const std::string id = RunningJob();
  Open(10, id);
  ASSERT_TRUE(counts_.Await(&Counts::live, 10));
  EXPECT_EQ(server_->watch_streams(), 10);
  for (int i = 0; i < 4; ++i) streams_[i]->Cancel();
  ASSERT_TRUE(counts_.Await(&Counts::finished, 4));
  EXPECT_TRUE(AwaitWatchers(6));
  ASSERT_TRUE(worker_->Report({testing::ScriptedWorker::Metrics(1, 1, 1.0, 10)}).ok());
  ASSERT_TRUE(worker_->Report({testing::ScriptedWorker::Exited(0, "")}).ok());
  ASSERT_TRUE(counts_.Await(&Counts::finished, 10));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(streams_[i]->code(), i < 4 ? grpc::StatusCode::CANCELLED : grpc::StatusCode::OK);
    if (i >= 4) EXPECT_EQ(streams_[i]->steps(), std::vector<int64_t>{1});
  }
  EXPECT_TRUE(AwaitWatchers(0));
}

TEST_F(WatchReactorTest, ShutdownEndsLiveStreamsUnavailable) {
  const std::string id = RunningJob();
  Open(20, id);
  ASSERT_TRUE(counts_.Await(&Counts::live, 20));
  server_->Shutdown();
  ASSERT_TRUE(counts_.Await(&Counts::finished, 20));
  for (const auto& s : streams_) EXPECT_EQ(s->code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(WatchReactorTest, AnUnknownJobIsNotFound) {
  Open(1, "404");
  ASSERT_TRUE(counts_.Await(&Counts::finished, 1));
  EXPECT_EQ(streams_[0]->code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(streams_[0]->seqs().empty());
}

}  // namespace
}  // namespace lmtrain
