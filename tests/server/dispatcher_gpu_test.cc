// Dispatcher GPU assignment: each rank gets its own GPU indices, recorded in the attempt and its
// SCHEDULED event; GPUs come back when ranks end; a restarted server rebuilds who holds which
// GPU from the workers' running ranks (stale ranks included), so no GPU is given twice.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/server/dispatcher_fixture.h"

namespace lmtrain::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class DispatcherGpuTest : public DispatcherFixture {
 protected:
  WorkerInfo GpuInfo(const std::string& name, int gpus) {
    WorkerInfo info;
    info.name = name;
    info.hostname = name + ".host";
    info.slots = 4;
    info.devices.push_back({"cpu", 0, "cpu", 0, ""});
    for (int i = 0; i < gpus; ++i) info.devices.push_back({"cuda", i, "gpu", 1 << 30, ""});
    info.rendezvous_port_base = 40000;
    info.rendezvous_port_count = 4;
    return info;
  }
  std::string GpuWorker(const std::string& name, int gpus,
                        const std::vector<RankRef>& running = {}) {
    return dispatcher_->RegisterWorker(GpuInfo(name, gpus), running);
  }
  static std::vector<std::vector<int>> GpusOf(const std::vector<JobAssignment>& assignments) {
    std::vector<std::vector<int>> out;
    for (const JobAssignment& a : assignments) out.push_back(a.gpus);
    return out;
  }
  std::string StateReasons(const std::string& id) {
    std::string out;
    // A named StatusOr: `*temporary` in a range-for dangles.
    const auto events = store_.ListEvents(id, 0, 1000);
    for (const EventRecord& e : *events) {
      if (auto* s = std::get_if<StateChangeEvent>(&e.payload)) out += s->reason + "\n";
    }
    return out;
  }
};

TEST_F(DispatcherGpuTest, OneGpuJobsOnATwoGpuWorkerGetDifferentGpus) {
  const std::string w = GpuWorker("w", 2);
  const std::string a = Submit("a", 0, "gpus_per_worker: 1");
  const std::string b = Submit("b", 0, "gpus_per_worker: 1");
  SyncResult sync = Sync(w);
  ASSERT_EQ(sync.assignments.size(), 2u);
  std::vector<std::vector<int>> gpus = GpusOf(sync.assignments);
  std::sort(gpus.begin(), gpus.end());
  EXPECT_THAT(gpus, ElementsAre(ElementsAre(0), ElementsAre(1)));
  const std::vector<int> a_gpus = Job(a).attempts.at(0).rank_gpus.at(0);
  EXPECT_THAT(StateReasons(a),
              HasSubstr("rank 0 on " + w + " GPU " + std::to_string(a_gpus.at(0))));
  EXPECT_NE(Job(b).attempts.at(0).rank_gpus.at(0), a_gpus);
}

TEST_F(DispatcherGpuTest, CpuJobsGetNoGpus) {
  const std::string w = GpuWorker("w", 2);
  Submit("cpu");
  SyncResult sync = Sync(w);
  ASSERT_EQ(sync.assignments.size(), 1u);
  EXPECT_THAT(sync.assignments[0].gpus, IsEmpty());
}

TEST_F(DispatcherGpuTest, GpusComeBackWhenRanksEnd) {
  const std::string w = GpuWorker("w", 2);
  const std::string a = Submit("a", 0, "gpus_per_worker: 2");
  std::vector<JobAssignment> first = Sync(w).assignments;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_THAT(GpusOf(first), ElementsAre(ElementsAre(0), ElementsAre(1)));
  const std::string b = Submit("b", 0, "gpus_per_worker: 1");
  std::vector<RankRef> running = {Ref(first[0]), Ref(first[1])};
  EXPECT_THAT(Sync(w, running).assignments, IsEmpty());
  EXPECT_THAT(dispatcher_->WaitingReason(b),
              ::testing::StartsWith("needs 1 GPU on one worker; the most free on any worker is "
                                    "0 (" + w + ")"));
  for (const JobAssignment& r : first) Start(w, r);
  ASSERT_TRUE(Exit(w, first[1], 1).ok());  // Rank 1 fails: rank 0 is stopped, then ends.
  ASSERT_TRUE(Exit(w, first[0], -1, /*cancelled=*/true, 15).ok());
  EXPECT_EQ(State(a), JobState::kFailed);
  std::vector<JobAssignment> next = Sync(w).assignments;
  ASSERT_EQ(next.size(), 1u) << dispatcher_->WaitingReason(b);
  EXPECT_EQ(next[0].job_id, b);
  EXPECT_EQ(next[0].gpus, std::vector<int>{0});
  const std::string c = Submit("c", 0, "gpus_per_worker: 1");
  next = Sync(w, {Ref(next[0])}).assignments;
  ASSERT_EQ(next.size(), 1u) << dispatcher_->WaitingReason(c);
  EXPECT_EQ(next[0].gpus, std::vector<int>{1});
}

TEST_F(DispatcherGpuTest, RestartRebuildsHeldGpusFromRunningRanks) {
  const std::string w = GpuWorker("w", 2);
  const std::string a = Submit("a", 0, "gpus_per_worker: 1");
  std::vector<JobAssignment> first = Sync(w).assignments;
  ASSERT_EQ(first.size(), 1u);
  Start(w, first[0]);
  RankRef a_rank = Ref(first[0]);
  a_rank.gpus = first[0].gpus;
  RankRef stale{"999", 0, 1, {first[0].gpus[0] == 0 ? 1 : 0}};  // Being stopped, still alive.
  Restart();
  const std::string again = GpuWorker("w", 2, {a_rank, stale});
  const std::string b = Submit("b", 0, "gpus_per_worker: 1");
  SyncResult sync = Sync(again, {a_rank, stale});
  EXPECT_THAT(sync.assignments, IsEmpty());
  EXPECT_THAT(Stops(sync), ElementsAre("999/0/1"));
  // The stale rank has exited: its GPU is free, a's is not.
  sync = Sync(again, {a_rank});
  ASSERT_EQ(sync.assignments.size(), 1u);
  EXPECT_EQ(sync.assignments[0].job_id, b);
  EXPECT_EQ(sync.assignments[0].gpus, stale.gpus);
  EXPECT_EQ(State(a), JobState::kRunning);
}

TEST_F(DispatcherGpuTest, SubmitRefusesCudaOptionsWithoutGpus) {
  JobFolder folder;
  const std::string base =
      "name: f\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 8, "
      "n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\ndata: {train_file: train.txt, "
      "block_size: 8}\ntraining:\n  fp16: true\n";
  auto refused = manager_->Submit({base, "job.yaml", folder.dir().string(), "", ""});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "job.yaml:7: training.fp16 needs a GPU: set resources.gpus_per_worker > 0 (or use "
            "bf16: true on CPU)");
  auto accepted = manager_->Submit(
      {base + "resources: {gpus_per_worker: 1}\n", "job.yaml", folder.dir().string(), "", ""});
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(Job(*accepted).resources.gpus_per_worker, 1);
  EXPECT_EQ(Job(*accepted).resources.slots_per_worker, 1);
}

}  // namespace
}  // namespace lmtrain::testing
