#include "server/job_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/server/job_manager_fixture.h"

namespace lmtrain {
namespace {

class JobManagerTest : public testing::JobManagerFixture {};

TEST_F(JobManagerTest, SubmitStoresNormalisedSpecWithAbsolutePaths) {
  auto id = manager_.Submit(folder_.Request());
  ASSERT_TRUE(id.ok()) << id.status();
  auto job = manager_.Get(*id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(job->task, "clm");
  EXPECT_NE(job->spec_yaml.find((folder_.dir() / "train.txt").string()), std::string::npos);
  EXPECT_EQ(job->created_at_ms, clock_.NowMs());
}

TEST_F(JobManagerTest, SubmitStoresUserAndResourceRequest) {
  testing::JobFolder folder("gang", 7,
                            "workers: 2, slots_per_worker: 3, max_retries: 5, "
                            "selector: {gpu: h100}");
  SubmitRequest r = folder.Request();
  r.user = "alice";
  auto id = manager_.Submit(r);
  ASSERT_TRUE(id.ok()) << id.status();
  const JobRecord job = *manager_.Get(*id);
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.priority, 7);
  EXPECT_EQ(job.resources.workers, 2);
  EXPECT_EQ(job.resources.slots_per_worker, 3);
  EXPECT_EQ(job.resources.max_retries, 5);
  EXPECT_EQ(job.resources.selector, (std::map<std::string, std::string>{{"gpu", "h100"}}));
}

TEST_F(JobManagerTest, BadSpecsStoreNothing) {
  struct Case {
    std::string yaml, expect;
  } cases[] = {
      {"name: x\ntask: [unclosed\n", "invalid YAML"},
      {"name: x\ntask: translate\n", "translate"},
      {"name: x\ntask: clm\nmodel:\n  config: {model_type: gpt2}\ntokenizer:\n  train: {}\n"
       "data:\n  train_file: missing.txt\n",
       "missing.txt"},
  };
  for (const Case& c : cases) {
    auto id = manager_.Submit({c.yaml, "job.yaml", folder_.dir().string(), "", ""});
    ASSERT_FALSE(id.ok()) << c.yaml;
    EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(id.status().message().find(c.expect), std::string::npos) << id.status();
  }
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(JobManagerTest, RelativeBaseDirIsRejected) {
  SubmitRequest r = folder_.Request();
  r.base_dir = "relative/dir";
  EXPECT_EQ(manager_.Submit(r).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(JobManagerTest, RequestIdMakesSubmitIdempotent) {
  auto a = manager_.Submit(folder_.Request("req-1"));
  auto b = manager_.Submit(folder_.Request("req-1"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(JobCount(), 1u);
}

TEST_F(JobManagerTest, UnknownJobIsNotFound) {
  EXPECT_EQ(manager_.Get("999").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_.Cancel("999", "").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(JobManagerTest, CancelRecordsItsEventAndTellsTheHubsListeners) {
  auto id = manager_.Submit(folder_.Request());
  ASSERT_TRUE(id.ok());
  std::vector<std::string> bumped;
  const int listener = hub_.AddListener([&](const std::string& key) { bumped.push_back(key); });
  ASSERT_EQ(*manager_.Cancel(*id, "bye"), JobState::kCancelled);
  hub_.RemoveListener(listener);
  EXPECT_NE(std::find(bumped.begin(), bumped.end(), *id), bumped.end());
  auto events = manager_.EventsAfter(*id, 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  auto* last = std::get_if<StateChangeEvent>(&events->back().payload);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->state, JobState::kCancelled);
  EXPECT_EQ(last->reason, "bye");
}

SubmitRequest WithModelConfig(const testing::JobFolder& folder, const std::string& config) {
  return {"name: sized\ntask: clm\nmodel:\n  config: " + config +
              "\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\ndata:\n  train_file: train.txt\n"
              "  block_size: 8\n",
          "job.yaml", folder.dir().string(), "", ""};
}

TEST_F(JobManagerTest, ModelTooLargeForAnyMachineIsRefusedAtSubmit) {
  auto id = manager_.Submit(WithModelConfig(
      folder_, "{model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 4000000000, n_positions: 32}"));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted) << id.status();
  EXPECT_NE(id.status().message().find("model.config"), std::string::npos) << id.status();
  EXPECT_NE(id.status().message().find("the server's machine has"), std::string::npos)
      << id.status();
  EXPECT_EQ(JobCount(), 0u);
}

JobManager::Options OneMegabyteServer() {
  JobManager::Options options;
  options.machine_memory_bytes = 1e6;  // 1 MB: less than a 2-layer, 64-wide GPT-2 needs.
  return options;
}

class JobManagerModelSizeTest : public testing::JobManagerFixture {
 protected:
  JobManagerModelSizeTest() : JobManagerFixture(OneMegabyteServer()) {}
};

TEST_F(JobManagerModelSizeTest, AWorkerWithMoreMemoryAdmitsWhatTheServerCouldNotHold) {
  const std::string config = "{model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 64, n_positions: 32}";
  auto refused = manager_.Submit(WithModelConfig(folder_, config));
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();

  WorkerInfo worker;
  worker.name = "big";
  worker.devices.push_back({"cpu", 0, "2 cores", int64_t{64} << 30, ""});
  const std::string worker_id = dispatcher_.RegisterWorker(worker, {});
  auto admitted = manager_.Submit(WithModelConfig(folder_, config));
  EXPECT_TRUE(admitted.ok()) << admitted.status();

  auto still_too_big = manager_.Submit(WithModelConfig(
      folder_, "{model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 4000000000, n_positions: 32}"));
  ASSERT_EQ(still_too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(still_too_big.status().message().find("the largest machine (worker " + worker_id),
            std::string::npos)
      << still_too_big.status();
}

// A store whose FindJobByRequestId never finds a job: what a submit sees when another submit
// with its request id commits between its request-id check and its insert.
class LateRequestIdStore : public InMemoryJobStore {
 public:
  absl::StatusOr<std::optional<std::string>> FindJobByRequestId(const std::string&) override {
    return std::optional<std::string>();
  }
};

class JobManagerRequestIdRaceTest : public ::testing::Test {
 protected:
  JobManagerRequestIdRaceTest()
      : scheduler_(scheduler::MakePolicyScheduler({})),
        dispatcher_(&store_, &clock_, &hub_, scheduler_.get(), {"/artifacts", 10000}),
        manager_(&store_, &clock_, &hub_, &dispatcher_) {}

  LateRequestIdStore store_;
  FakeClock clock_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  Dispatcher dispatcher_;
  JobManager manager_;
};

// The duplicate is answered with the stored job, and the dispatcher places the stored record
// (one worker), not the duplicate's job file (a gang of two).
TEST_F(JobManagerRequestIdRaceTest, DuplicateAnswersWithTheStoredJobAndQueuesNothingOfItsOwn) {
  testing::JobFolder one("one"), gang("gang", 9, "workers: 2");
  const absl::StatusOr<std::string> first = manager_.Submit(one.Request("req-1"));
  const absl::StatusOr<std::string> again = manager_.Submit(gang.Request("req-1"));
  ASSERT_TRUE(first.ok() && again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(store_.ListJobs({})->size(), 1u);
  EXPECT_EQ(store_.GetJob(*first)->resources.workers, 1);

  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = 1;
  const std::string w = dispatcher_.RegisterWorker(info, {});
  const absl::StatusOr<SyncResult> sync = dispatcher_.Sync(w, {});
  ASSERT_TRUE(sync.ok()) << sync.status();
  ASSERT_EQ(sync->assignments.size(), 1u) << dispatcher_.WaitingReason(*first);
  EXPECT_EQ(sync->assignments[0].job_id, *first);
  EXPECT_EQ(sync->assignments[0].world_size, 1);
}

TEST_F(JobManagerRequestIdRaceTest, DuplicateOfAnotherUsersRequestIdIsRefused) {
  testing::JobFolder folder;
  SubmitRequest mine = folder.Request("req-1");
  mine.user = "alice";
  SubmitRequest theirs = folder.Request("req-1");
  theirs.user = "bob";
  ASSERT_TRUE(manager_.Submit(mine).ok());
  const absl::StatusOr<std::string> refused = manager_.Submit(theirs);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
  EXPECT_EQ(store_.ListJobs({})->size(), 1u);
}

}  // namespace
}  // namespace lmtrain
