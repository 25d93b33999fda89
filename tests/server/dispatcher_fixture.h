// A Dispatcher over an in-memory store, a fake clock and the real policy scheduler, with
// helpers that play the worker's side of the protocol. Shared by the dispatcher tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "server/dispatcher.h"
#include "server/job_manager.h"
#include "server/scheduler/scheduler.h"
#include "storage/in_memory_job_store.h"
#include "tests/server/fake_clock.h"
#include "tests/server/server_test_util.h"

namespace lmtrain::testing {

inline constexpr int64_t kLeaseMs = 10000;

// The in-memory store, recording the size of each TransitionJobsThrough batch it is given.
class BatchRecordingStore : public InMemoryJobStore {
 public:
  absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> TransitionJobsThrough(
      const std::vector<JobSteps>& batch) override {
    {
      absl::MutexLock lock(&batches_mu_);
      batches_.push_back(batch.size());
    }
    return InMemoryJobStore::TransitionJobsThrough(batch);
  }
  // The sizes of the batches since the last call.
  std::vector<size_t> TakeBatches() {
    absl::MutexLock lock(&batches_mu_);
    return std::exchange(batches_, {});
  }

 private:
  absl::Mutex batches_mu_;
  std::vector<size_t> batches_ ABSL_GUARDED_BY(batches_mu_);
};

class DispatcherFixture : public ::testing::Test {
 protected:
  DispatcherFixture()
      : scheduler_(scheduler::MakePolicyScheduler({})),
        dispatcher_(std::make_unique<Dispatcher>(&store_, &clock_, &hub_, scheduler_.get(),
                                                 Dispatcher::Options{"/artifacts", kLeaseMs})),
        manager_(std::make_unique<JobManager>(&store_, &clock_, &hub_, dispatcher_.get())) {}

  // Rebuilds the dispatcher (and manager) with other options; call before any submit.
  void UseOptions(Dispatcher::Options options) {
    manager_.reset();
    dispatcher_ =
        std::make_unique<Dispatcher>(&store_, &clock_, &hub_, scheduler_.get(), std::move(options));
    manager_ = std::make_unique<JobManager>(&store_, &clock_, &hub_, dispatcher_.get());
  }

  std::string Submit(const std::string& name, int priority = 0, const std::string& resources = "",
                     const std::string& user = "") {
    JobFolder folder(name, priority, resources);
    SubmitRequest request = folder.Request();
    request.user = user;
    auto id = manager_->Submit(request);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
  JobState State(const std::string& id) { return store_.GetJob(id)->state; }
  JobRecord Job(const std::string& id) { return *store_.GetJob(id); }

  std::string Worker(const std::string& name, int slots,
                     std::map<std::string, std::string> labels = {}) {
    WorkerInfo info;
    info.name = name;
    info.hostname = name + ".host";
    info.slots = slots;
    info.labels = std::move(labels);
    info.rendezvous_port_base = 40000;
    info.rendezvous_port_count = 2;
    return dispatcher_->RegisterWorker(info, {});
  }
  SyncResult Sync(const std::string& worker, const std::vector<RankRef>& running = {}) {
    auto r = dispatcher_->Sync(worker, running);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(SyncResult{});
  }
  static RankRef Ref(const JobAssignment& a) { return {a.job_id, a.rank, a.attempt}; }
  // SyncResult::stop as "job/rank/attempt" strings, for readable matchers.
  static std::vector<std::string> Stops(const SyncResult& r) {
    std::vector<std::string> out;
    for (const RankRef& ref : r.stop) {
      out.push_back(ref.job_id + "/" + std::to_string(ref.rank) + "/" +
                    std::to_string(ref.attempt));
    }
    return out;
  }
  // The worker starts the rank: acknowledges it and reports lm-train started.
  void Start(const std::string& worker, const JobAssignment& a) {
    auto r = dispatcher_->ReportEvents(worker, Ref(a), {JobStartedReport{100 + a.rank}});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  absl::StatusOr<bool> Exit(const std::string& worker, const JobAssignment& a, int code,
                            bool cancelled = false, int signal = 0) {
    return dispatcher_->ReportEvents(worker, Ref(a),
                                     {JobExitedReport{code, signal, "", cancelled}});
  }
  std::vector<std::string> StateHistory(const std::string& id) {
    std::vector<std::string> out;
    // A named StatusOr: `*temporary` in a range-for dangles.
    const auto events = store_.ListEvents(id, 0, 1000);
    for (const EventRecord& e : *events) {
      if (auto* s = std::get_if<StateChangeEvent>(&e.payload)) {
        out.push_back(std::string(JobStateName(s->state)));
      }
    }
    return out;
  }
  // Replaces the dispatcher as a server restart would (same store, fresh memory).
  void Restart() {
    manager_.reset();
    dispatcher_ = std::make_unique<Dispatcher>(&store_, &clock_, &hub_, scheduler_.get(),
                                               Dispatcher::Options{"/artifacts", kLeaseMs});
    ASSERT_TRUE(dispatcher_->Recover().ok());
    manager_ = std::make_unique<JobManager>(&store_, &clock_, &hub_, dispatcher_.get());
  }

  BatchRecordingStore store_;
  FakeClock clock_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<JobManager> manager_;
};

}  // namespace lmtrain::testing
