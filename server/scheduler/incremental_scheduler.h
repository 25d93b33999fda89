// IncrementalScheduler: the policy of scheduler.h over a standing cluster state, so that the
// decision after one event costs O(jobs examined) instead of O(queue). The caller mirrors every
// change into it; Schedule() then decides and commits its own decision: placed jobs become
// running (started at now_ms), victims become preempting. The caller applies the decision and
// reports what happens next (RemoveJob when a job exits for any reason, including after
// preemption; AddQueued again when it is requeued).
//
//   AddQueued ──► queued ──Schedule──► running ──Schedule──► preempting
//                   │                     │                      │
//                   └──── RemoveJob ──────┴────── RemoveJob ─────┘ (slots back to the worker)
//
// Jobs whose request no connected worker set could ever satisfy (bad selector, too large, invalid)
// are parked at AddQueued and return to the queue when UpsertWorker might make them fit; their
// explanation appears in the next decision.
//
// A complete pass away from the owner's lock: the owner journals every change (set_journal); a
// replica replays the journal (Replay) and plans a complete pass without committing it (Plan),
// on its own thread; the owner then commits what still holds on its state (Adopt).
//
// Not thread-safe: one owner (the Dispatcher's mutex; its replica has a mutex of its own).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/scheduler/journal.h"
#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler {

namespace internal {
class ClusterState;
struct QueuedRec;
}  // namespace internal

class IncrementalScheduler {
 public:
  explicit IncrementalScheduler(const SchedulerOptions& options);
  ~IncrementalScheduler();
  IncrementalScheduler(const IncrementalScheduler&) = delete;
  IncrementalScheduler& operator=(const IncrementalScheduler&) = delete;

  // Replaces the whole state (users, workers, running and queued jobs) with the snapshot's
  // (taken by value: a journal keeps it).
  void Reset(ClusterSnapshot snapshot);
  void SetUser(const std::string& user, const UserPolicy& policy);
  void SetDefaultUser(const UserPolicy& policy);
  // Adds or replaces a worker; free_slots is taken as given (it should exclude running jobs).
  void UpsertWorker(const WorkerSnapshot& worker);
  // Running jobs on it stay until RemoveJob; remove them before the worker comes back.
  void RemoveWorker(const std::string& worker_id);
  // AlreadyExists when the id is queued, parked or running.
  absl::Status AddQueued(const QueuedJob& job);
  // A queued job is dropped; a running one gives its slots back. NotFound when unknown.
  absl::Status RemoveJob(const std::string& job_id);
  // A job asked to stop for another reason than this scheduler's decision. NotFound when not
  // running.
  absl::Status MarkPreempting(const std::string& job_id);

  // One pass bounded by options.max_jobs_examined, committed to the state.
  Decision Schedule(int64_t now_ms);
  // One pass over every queued job (explains all of them, parked ones included), committed to
  // the state.
  Decision ScheduleAll(int64_t now_ms);
  // One pass bounded by `max_jobs_examined` (0: every job, as ScheduleAll), committed to the
  // state.
  Decision Schedule(int64_t now_ms, int max_jobs_examined);
  // False when a complete pass now would start or preempt nothing, so that it could only
  // explain. That is when
  // - the last pass was not cut short (Decision::cut_short) and nothing changed since (no call
  //   above; and min_runtime_before_preemption_ms is 0, so that time alone makes no victim), or
  // - no job is queued that present workers could run (parked ones aside), or
  // - no present worker has a free slot, none has slots of a preempting job to wait for, and
  //   no preemption candidate has a lower priority than the highest queued job (or preemption
  //   is off).
  // True does not promise that a pass will.
  bool MightStartOrPreempt() const;
  int max_jobs_examined() const { return options_.max_jobs_examined; }

  // From now on every change to the state is appended to `journal` (nullptr: none), in order:
  // the calls above (Reset as one ResetOp), and the placements and preemptions that passes and
  // Adopt commit. The caller takes the ops it has replayed out of the vector.
  void set_journal(std::vector<JournalOp>* journal) { journal_ = journal; }
  // Applies another scheduler's journal to this one (a replica built with the same options).
  // Ops that do not apply here (a start of a job this state does not hold queued) are skipped:
  // they cannot occur while the replica has replayed every op since the other's ResetOp.
  // Takes the ops: a ResetOp's snapshot (every queued job) is moved in, not copied.
  void Replay(std::vector<JournalOp> ops);
  // What ScheduleAll(now_ms) would decide (every parked job explained), without committing it:
  // the state is left as it was.
  Decision Plan(int64_t now_ms);
  // Commits the placements and preemptions of `plan` — a replica's Plan() of this state as of
  // `version` — that still hold here, and returns them (waiting stays empty):
  // - a placement holds when its job is still queued (not parked), its user is within
  //   max_running_jobs and max_gpus, and each of its workers is present, matches the job's
  //   selector and has the job's slots and GPUs free;
  // - a preemption holds when its victim still runs and is not preempting, and the job it makes
  //   room for is still queued.
  // When version == version() (no change since), everything holds and the state is as after
  // ScheduleAll. Otherwise a placement that no longer holds is dropped: its job stays queued
  // for the next pass.
  Decision Adopt(const Decision& plan, int64_t now_ms, uint64_t version);
  // Counts changes to the state (each call above that can change it, and each pass that
  // committed a placement or preemption).
  uint64_t version() const { return version_; }

  size_t queued() const;  // Parked jobs included.
  size_t running() const;

 private:
  struct Parked {
    QueuedJob job;
    std::string why;
  };
  Decision Pass(int64_t now_ms, int max_jobs_examined);
  // Adds every parked job's reason to the decision.
  void ExplainParked(Decision* decision) const;
  // The state changed: a complete pass may now decide differently.
  void Changed() {
    settled_ = false;
    ++version_;
  }
  void Journal(JournalOp op) {
    if (journal_ != nullptr) journal_->push_back(std::move(op));
  }
  void JournalDecision(const Decision& decision, int64_t now_ms);
  absl::Status AddQueuedUnjournaled(const QueuedJob& job);
  // Starts a queued job on the named workers (ClusterState::Start: the caller ends the pass);
  // checks the placement first when `check` (see Adopt). False when it did not start.
  bool StartOn(const Placement& placement, int64_t now_ms, bool check);
  bool PlacementHolds(const internal::QueuedRec& job, const std::vector<int>& workers) const;

  const SchedulerOptions options_;
  std::unique_ptr<internal::ClusterState> state_;
  std::map<std::string, Parked> parked_;  // Jobs no present workers could run.
  std::set<std::string> parked_news_;     // Parked since the last decision.
  // The last pass was not cut short and no call has changed the state since.
  bool settled_ = false;
  uint64_t version_ = 0;
  std::vector<JournalOp>* journal_ = nullptr;
};

}  // namespace lmtrain::scheduler
