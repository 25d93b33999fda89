#include "worker/agent/job_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <variant>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/sha256.h"
#include "tests/test_paths.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

// Records every report; thread-safe. WaitFor blocks until a matching event has been reported.
class RecordingClient final : public ServerClient {
 public:
  absl::StatusOr<std::string> Register(const WorkerRegistration&) override { return "w1"; }
  absl::StatusOr<SyncOrders> Sync(const WorkerSync&) override { return SyncOrders(); }
  absl::StatusOr<ReportReply> Report(const RankEventBatch& batch) override {
    absl::MutexLock lock(&mu_);
    events_.insert(events_.end(), batch.events.begin(), batch.events.end());
    return ReportReply();
  }
  std::vector<RankEvent> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // True once some reported event satisfies `match`; false if none has after `timeout`.
  bool WaitFor(const std::function<bool(const RankEvent&)>& match,
               absl::Duration timeout = absl::Seconds(20)) {
    absl::MutexLock lock(&mu_);
    const auto seen = [&] { return std::any_of(events_.begin(), events_.end(), match); };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
  }

 private:
  absl::Mutex mu_;
  std::vector<RankEvent> events_;
};

class JobRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmtrain-runner-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<JobRunner> Make(const std::string& mode, const std::string& trainer) {
    RankAssignment a;
    a.job_id = "7";
    a.spec_yaml = "mode: " + mode + "\n";
    a.output_dir = (dir_ / "out").string();
    JobRunner::Options o{trainer, (dir_ / "work").string(), absl::Milliseconds(300),
                         absl::Milliseconds(20)};
    return std::make_unique<JobRunner>(
        a, [] { return "w1"; }, &client_, &launcher_, o);
  }
  static std::string FakeTrainer() {
    return std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/agent/fake_trainer.sh";
  }
  // fake_trainer.sh's "hang" and "stubborn" modes print this line once their TERM trap is set.
  bool WaitUntilTrapped() {
    return client_.WaitFor([](const RankEvent& e) {
      const RankLog* log = std::get_if<RankLog>(&e);
      return log != nullptr && log->text == "TERM trap set";
    });
  }
  static void WaitDone(JobRunner* r, absl::Duration timeout = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!r->done() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
    ASSERT_TRUE(r->done());
  }
  RankExited Exit() {
    auto events = client_.events();
    EXPECT_FALSE(events.empty());
    const RankExited* exited = events.empty() ? nullptr : std::get_if<RankExited>(&events.back());
    EXPECT_NE(exited, nullptr);
    return exited != nullptr ? *exited : RankExited{};
  }

  fs::path dir_;
  RecordingClient client_;
  PosixProcessLauncher launcher_;
};

TEST_F(JobRunnerTest, RelaysLogsMetricsCheckpointsAndExit) {
  auto r = Make("ok", FakeTrainer());
  r->Start();
  WaitDone(r.get());
  bool started = false, metrics = false, checkpoint = false, log = false;
  for (const RankEvent& e : client_.events()) {
    if (auto* s = std::get_if<RankStarted>(&e)) started |= s->pid > 0;
    if (auto* m = std::get_if<TrainingMetrics>(&e)) metrics |= m->step == 1 && m->loss == 2.5;
    if (auto* c = std::get_if<RankCheckpoint>(&e)) checkpoint |= c->path == "/tmp/ckpt-1";
    if (auto* l = std::get_if<RankLog>(&e)) log |= l->text == "done" && l->stream == "stdout";
  }
  EXPECT_TRUE(started && metrics && checkpoint && log);
  EXPECT_EQ(Exit().exit_code, 0);
  // One folder per attempt and rank (the assignment leaves both 0).
  EXPECT_TRUE(fs::exists(dir_ / "work" / "jobs" / "7" / "attempt-0-rank-0" / "job.yaml"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "logs" / "lm-train.log"));
}

TEST_F(JobRunnerTest, FailureCarriesStderrTail) {
  auto r = Make("fail", FakeTrainer());
  r->Start();
  WaitDone(r.get());
  RankExited exit = Exit();
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_NE(exit.error.find("something broke"), std::string::npos);
}

TEST_F(JobRunnerTest, CancelSendsSigtermAndReportsCancelled) {
  auto r = Make("hang", FakeTrainer());
  r->Start();
  ASSERT_TRUE(WaitUntilTrapped());
  const absl::Time start = absl::Now();
  r->Cancel();
  WaitDone(r.get());
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  RankExited exit = Exit();
  EXPECT_TRUE(exit.cancelled);
  EXPECT_EQ(exit.exit_code, 143);
}

TEST_F(JobRunnerTest, ChildIgnoringSigtermIsKilledAfterGrace) {
  auto r = Make("stubborn", FakeTrainer());
  r->Start();
  ASSERT_TRUE(WaitUntilTrapped());
  r->Cancel();
  WaitDone(r.get());
  RankExited exit = Exit();
  EXPECT_TRUE(exit.cancelled);
  EXPECT_EQ(exit.signal, SIGKILL);
}

TEST_F(JobRunnerTest, MissingTrainerIsReportedAsExit127) {
  auto r = Make("ok", (dir_ / "no-such-lm-train").string());
  r->Start();
  WaitDone(r.get());
  RankExited exit = Exit();
  EXPECT_EQ(exit.exit_code, 127);
  EXPECT_NE(exit.error.find("no-such-lm-train"), std::string::npos);
}

// Serves one blob from memory.
class OneBlobFetcher final : public ArtifactFetcher {
 public:
  explicit OneBlobFetcher(std::map<std::string, std::string> blobs) : blobs_(std::move(blobs)) {}
  absl::Status Fetch(const std::string& hex, const std::string& dest) override {
    auto it = blobs_.find(hex);
    if (it == blobs_.end()) return absl::NotFoundError(hex);
    std::ofstream(dest, std::ios::binary) << it->second;
    return absl::OkStatus();
  }

 private:
  std::map<std::string, std::string> blobs_;
};

TEST_F(JobRunnerTest, ArtifactsOfARunningJobAreNotEvictedUntilItExits) {
  const std::string data(100, 'd'), other(200, 'o');
  const std::string data_hex = DigestHex(*Sha256Of(data)), other_hex = DigestHex(*Sha256Of(other));
  OneBlobFetcher fetcher({{data_hex, data}, {other_hex, other}});
  ArtifactCache::Options cache_options;
  cache_options.max_bytes = 250;  // Room for one of the two only.
  ArtifactCache cache(&fetcher, (dir_ / "cache").string(), cache_options);
  const fs::path trainer = dir_ / "sleeping_trainer.sh";
  std::ofstream(trainer) << "#!/bin/sh\nexec sleep 60\n";
  fs::permissions(trainer, fs::perms::owner_all);
  RankAssignment a;
  a.job_id = "8";
  a.spec_yaml =
      "name: j\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
      "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n"
      "data:\n  train_file: artifact:sha256:" +
      data_hex + "\n";
  a.output_dir = (dir_ / "out").string();
  JobRunner::Options o{trainer.string(), (dir_ / "work").string(), absl::Milliseconds(300),
                       absl::Milliseconds(20), &cache};
  JobRunner runner(a, [] { return "w1"; }, &client_, &launcher_, o);
  runner.Start();
  ASSERT_TRUE(client_.WaitFor(
      [](const RankEvent& e) { return std::holds_alternative<RankStarted>(e); }));
  EXPECT_TRUE(absl::IsResourceExhausted(cache.Blob(other_hex).status()));  // Held: stays.
  runner.Cancel();
  WaitDone(&runner);
  ASSERT_TRUE(cache.Blob(other_hex).ok());  // Released with the exit: evicted now.
  EXPECT_EQ(cache.bytes(), 200);
}

}  // namespace
}  // namespace lmtrain
