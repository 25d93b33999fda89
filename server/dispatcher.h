// Dispatcher: lm-server's scheduling glue. It turns events — a job submitted, cancelled or
// finished, a worker joining, a worker or its lease lost — into decisions of the incremental
// scheduler (server/scheduler) and pushes each decision to the workers it concerns. No gRPC or
// SQLite types: it talks to a JobStore, a Clock, an EventHub and a Scheduler given at
// construction (not owned).
//
// Parts, each its own header/source pair:
//   WorkerRegistry (worker_registry.h)  workers, their leases, rendezvous ports, stale GPUs,
//                                       and the Sync long-polls parked on each worker.
//   AttemptTable   (attempt_table.h)    the running attempts: ranks per job and per worker.
//   IncrementalScheduler                the policy over a standing mirror of both plus the
//     (scheduler/incremental_scheduler.h) queue; each event updates the mirror, then one pass.
//                                       A replica of it, fed the mirror's journal, plans the
//                                       complete passes without the dispatcher's lock.
//   Dispatcher     (this file)          the events, the mirror updates, applying decisions to
//                                       the store (dispatcher.cc: workers, Sync, reports,
//                                       cancel, leases; dispatcher_schedule.cc: the mirror and
//                                       passes; dispatcher_complete_pass.cc: complete passes;
//                                       dispatcher_attempts.cc: placement and the ends of
//                                       attempts).
//
// Events and what they push:
//   submit (JobCreated), requeue  -> pass -> placement -> Assignment woken into each gang
//                                    worker's parked Sync (Wake(worker), that worker only).
//   cancel, preemption, a rank's failure -> the attempt's other ranks are stopped
//                                    (SyncResult::stop, woken the same way); when every rank
//                                    has ended, the attempt ends (attempt_outcome.h).
//   a rank's exit (ReportEvents)  -> its slots and GPUs go back; the workers that freed them
//                                    are woken and the pass runs on their parked Sync, which
//                                    returns the next job placed there. The report itself
//                                    runs no pass (so a job its exit requeued waits for it).
//   worker joins (RegisterWorker) -> pass over the new room.
//   worker lost (ExpireLeases)    -> its ranks are lost, attempts retried, queue re-placed.
// Sync() heartbeats, re-attaches ranks, runs the pass an event left pending (a finish, a
// failed placement, dispatching turned on) and reads the worker's pending work.
//
// Workers register (slots, labels, rendezvous ports), then call Sync() as heartbeat and
// request for work; a worker silent for longer than lease_timeout_ms loses its lease and
// every rank it ran counts as lost. A placement (QUEUED -> SCHEDULED) gives one Assignment
// per rank, sent on every Sync of its worker until the worker acknowledges it. The values
// exchanged (assignments, reports, worker status) are in dispatcher_messages.h.
//
// An attempt is one placement of a job on a gang of workers: ranks = workers x
// slots_per_worker lm-train processes that rendezvous at rank 0's worker (its
// advertise_address and a port from its rendezvous range). The attempt ends when every rank
// has exited or been lost; attempt_outcome.h decides the job's next state. When one rank
// fails, is lost, or the job is cancelled or preempted, the other ranks are stopped first
// (they appear in SyncResult::stop), so a requeued attempt never overlaps the old.
// PREEMPTED and RETRYING jobs are requeued at once (attempt N+1 resumes from the latest
// checkpoint: Assignment.resume).
//
// GPUs: a worker's cuda devices are counted by the scheduler next to its slots. When an
// attempt is placed, each rank of a job with resources.gpus_per_worker > 0 gets specific
// indices on its worker (gpu_assignment.h says why here), sent in its Assignment and recorded in
// the attempt and its SCHEDULED event ("rank 0 on w1 GPU 2"). A rank holds its GPUs until it has
// exited or been lost; a rank a worker still runs after being told to stop (a stale attempt, a
// lease that lapsed) holds the GPUs it reports until the worker stops listing it.
//
// Server restart: Recover() requeues PREEMPTED/RETRYING jobs and adopts SCHEDULED/RUNNING
// ones as orphans; workers re-register listing the ranks they still run, which re-attaches
// them, with the GPU indices they were started with. Ranks nobody claims within two lease
// timeouts are lost (the attempt is retried), at most Options::orphan_batch orphans per
// ExpireLeases call, so that thousands of them never hold mu_ for long (see ExpireLeases).
// A worker reporting a rank of an attempt that is not current is told to stop it.
//
// Dispatching on and off: SetDispatching(false) stops the passes (nothing is placed or
// preempted; reports, cancels and leases still apply), e.g. on a standby replica; turning it
// back on rebuilds the scheduler's mirror and runs a pass.
//
// Locking: one mutex, mu_, guards the registry, the attempt table, the scheduler's mirror and
// the queue; every public method takes it once and store calls happen under it, so decisions
// and their application are serialised (two workers never receive the same rank). The parts
// are thread-compatible and never lock. The one blocking call, SyncWait, parks on its worker's
// CondVar with mu_ released. A complete pass (ExpireLeases, WaitingReason) holds plan_mu_, which
// guards the scheduler's replica, and takes mu_ only for O(changes) steps in between. Lock
// order: plan_mu_, mu_, then inbox_mu_ or the EventHub's or the store's own locks (never the
// reverse: none calls back into the Dispatcher).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "server/attempt_outcome.h"
#include "server/attempt_table.h"
#include "server/dispatcher_messages.h"
#include "server/event_hub.h"
#include "server/scheduler/incremental_scheduler.h"
#include "server/worker_registry.h"
#include "storage/job_store.h"

namespace lmtrain {

class Dispatcher {
 public:
  struct Options {
    std::string artifacts_dir;  // Jobs write to artifacts_dir/jobs/<id>.
    int64_t lease_timeout_ms = 15000;
    // Fair-share weights and running-job limits per user (jobs without a user are
    // "anonymous"); users not listed get default_user.
    std::map<std::string, scheduler::UserPolicy> users;
    scheduler::UserPolicy default_user;
    // WaitingReason runs a complete pass at most this often (0: whenever events ran since the
    // last one); the lease tick runs its own regardless, where it could place (ExpireLeases).
    // See WaitingReason. (lm-server: 1000, --scheduler-config complete_pass_interval_ms.)
    int64_t complete_pass_interval_ms = 0;
    // Most orphans (attempts adopted by Recover that no worker re-attached in time) one
    // ExpireLeases call loses, and so requeues; each costs a few store writes under mu_.
    // Values below 1 count as 1.
    int orphan_batch = 16;
    // Tests: runs without the dispatcher's lock, on the thread of a complete pass, after the
    // pass is planned and before it is adopted (see CompletePass).
    std::function<void()> after_plan_for_tests;
  };

  // `policy` gives the scheduler (Scheduler::NewIncremental); it is not kept.
  Dispatcher(JobStore* store, Clock* clock, EventHub* hub, const scheduler::Scheduler* policy,
             Options options);
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;
  // Stops the inbox thread (JobCreated; jobs still in the inbox stay QUEUED in the store) and
  // the question thread (after the complete pass it may be running).
  ~Dispatcher();

  // Requeues PREEMPTED/RETRYING jobs and adopts SCHEDULED/RUNNING ones as orphans. Call at
  // start-up before serving, and again after Reset() when this replica takes over.
  absl::Status Recover();

  // Forgets every worker (their parked Syncs return and find themselves unknown), attempt and
  // queued job, as a replica that lost the lease must: the store is the truth, and Recover()
  // plus the workers' re-registrations rebuild it all. Call with dispatching off.
  void Reset();

  // Returns a new worker id. `running`: ranks it still runs (re-registration after a restart).
  std::string RegisterWorker(const WorkerInfo& info, const std::vector<RankRef>& running);

  // Heartbeat: renews the lease, re-attaches or stops the ranks in `running` (the worker's whole
  // list), and returns the worker's pending work. Never blocks.
  absl::StatusOr<SyncResult> Sync(const std::string& worker_id,
                                  const std::vector<RankRef>& running);
  // The long-poll form: as Sync, but when there is no work, parks until work is pushed to this
  // worker (an event placed a rank on it or stops one of its ranks), `wait` passes, or
  // Shutdown; then returns the worker's pending work (possibly none).
  absl::StatusOr<SyncResult> SyncWait(const std::string& worker_id,
                                      const std::vector<RankRef>& running, absl::Duration wait);

  // Stores a worker's reports for one rank. Returns true when that rank should stop.
  // Aborted: the worker id is unknown (server restart, lapsed lease, a replica that just took
  // over) — keep the reports until the worker has registered again here (not Unavailable,
  // which sends a worker's client on to another replica). NotFound: unknown job. FailedPrecondition: the
  // rank is not (or no longer) this worker's in the job's current attempt — the caller
  // should stop it and drop its reports.
  absl::StatusOr<bool> ReportEvents(const std::string& worker_id, const RankRef& rank,
                                    const std::vector<WorkerReport>& reports);

  // Cancels a job in any non-terminal state: at once when no rank runs, else after its ranks
  // have stopped. Returns the state after the call. FailedPrecondition if already terminal.
  absl::StatusOr<JobState> Cancel(const std::string& job_id, const std::string& reason);

  // Drops workers whose lease ran out and loses at most options.orphan_batch orphans whose
  // deadline passed: their attempts end (a job with retries left is requeued) and a bounded
  // pass runs; once no expired orphan is left, so does a complete pass (CompletePass), unless
  // it could only explain (IncrementalScheduler::MightStartOrPreempt: nothing can start or
  // preempt, as in a full cluster or a queue of jobs no worker can run), which waits for a
  // WaitingReason instead: a complete pass costs O(queue). Returns true when
  // expired orphans remain: call again. mu_ is released between calls, so Syncs, reports
  // and WaitingReason (ListJobs) are served between batches; a worker that re-attaches a
  // rank meanwhile keeps it, as it would have before the deadline.
  bool ExpireLeases();

  std::vector<WorkerStatus> ListWorkers();

  // A job was just created QUEUED (JobManager::Retry): it joins the queue and a pass runs.
  // Reads the job from the store; ignored when it is no longer QUEUED or unknown.
  void JobQueued(const std::string& job_id);

  // A stamp for JobCreated, taken before the job is created in the store.
  uint64_t CreationStamp() const { return store_reads_.load(std::memory_order_acquire); }
  // As JobQueued, for a job that JobStore::CreateJobOrFind has just created (created = true)
  // as `job` (NewJobRecord), with `stamp` = CreationStamp() taken before that call. The
  // record joins the queue as it is, without reading the store again, unless since the stamp
  // the dispatcher read jobs from the store on its own (a mirror rebuild) or cancelled one it
  // had not queued: then it might have seen or changed this job already, and it reads the job
  // as JobQueued does.
  // Never waits for mu_: when another call holds it (a complete pass or a mirror rebuild
  // holds it for O(queue)), the job waits in an inbox and a thread of the dispatcher's own
  // queues it once mu_ is free, so that a submit's latency does not include the scheduler's.
  // When mu_ is free (the usual case) the job is queued, and placed if it fits, before this
  // returns, as JobQueued does.
  void JobCreated(const JobRecord& job, uint64_t stamp);

  // Why a QUEUED job waits; "" if unknown. Per-event passes are bounded (see
  // ScheduleIfDirtyLocked), so a job queued behind more than a bounded pass examines gets its
  // reason from a complete pass (one over every queued job, however deep the queue). A
  // question starts one when events ran since the last and that ran at least
  // complete_pass_interval_ms ago:
  //  - when the job has a reason already, the question answers with it at once and the pass
  //    runs on a thread of the dispatcher's own (an O(queue) plan: 100-200 ms at 100k queued
  //    jobs), whose reasons later questions get;
  //  - when it has none, the question runs the pass itself and answers from it.
  // The first question after Recover or SetDispatching(true) loads the scheduler's mirror
  // first (O(queue)) if no event has yet.
  // Either way an answer may be as old as the last complete pass. Nor does a question wait for
  // a complete pass that the lease tick is planning: it answers from the reasons it has, which
  // that pass replaces when it is done.
  std::string WaitingReason(const std::string& job_id);
  // The same for each job, in order, from one hold of mu_ and at most one complete pass.
  std::vector<std::string> WaitingReasons(const std::vector<std::string>& job_ids);

  // Turns placement on (the default) or off; see the class comment.
  void SetDispatching(bool on);
  // Releases every parked SyncWait (they return at once, now and later). Call when stopping.
  void Shutdown();
  // SyncWait calls parked now.
  int ParkedSyncs();
  // Complete passes run so far (diagnostics and tests).
  int64_t CompletePasses();
  // The longest a complete pass has held mu_ at once since the last call (steady clock, ms;
  // benchmarks): the longest it made an event wait.
  double TakeLongestCompletePassHoldMs();

 private:
  // What the dispatcher keeps of a QUEUED job: what the scheduler ranks and places it by (not
  // its spec, which a deep queue cannot afford to hold), and its attempts so far where known
  // (the next attempt's number and history follow them; placement reads them from the store
  // where unknown).
  struct QueueEntry {
    std::string user;  // "" when anonymous.
    int priority = 0;
    int64_t created_at_ms = 0;
    JobResources resources;
    std::optional<std::vector<AttemptRecord>> attempts;
  };
  static QueueEntry EntryOf(const JobRecord& job, bool attempts_known);
  static scheduler::QueuedJob ToQueued(int64_t id, const QueueEntry& entry);

  // dispatcher_recover.cc: Recover's part for one SCHEDULED/RUNNING job: an attempt with no worker
  // yet, whose ranks are lost unless a worker re-attaches them by `orphan_deadline_ms`.
  void AdoptLocked(const JobRecord& job, int64_t orphan_deadline_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher.cc: registry, Sync, reports, cancel, leases.
  void AttachLocked(const std::string& worker_id, const std::vector<RankRef>& running,
                    SyncResult* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ReattachLocked(Attempt& a, const RankRef& ref, const std::string& worker_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  SyncResult PendingWorkLocked(const std::string& worker_id, SyncResult result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<SyncResult> SyncLocked(const std::string& worker_id,
                                        const std::vector<RankRef>& running)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyReportLocked(Attempt& a, int rank, const WorkerReport& report,
                         std::vector<EventPayload>* events) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RankEndedLocked(Attempt& a, int rank, RankExit exit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LoseWorkerLocked(const std::string& worker_id, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Loses at most `max` expired orphans; true when more are expired.
  bool LoseOrphansLocked(int64_t now_ms, int max) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ExpireLeases but its complete pass: drops the expired workers, loses a batch of orphans
  // and runs a bounded pass. True when more expired orphans remain.
  bool DropExpired() ABSL_LOCKS_EXCLUDED(mu_);
  // WaitingReason's rule: events ran since the last complete pass, and it ran at least
  // complete_pass_interval_ms ago.
  bool QuestionMayPassLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher_schedule.cc: the scheduler's mirror and the passes.
  // Runs a pass when an event changed something since the last one. An event's pass examines
  // at most --scheduler-config max_jobs_examined jobs (kEventPassJobs when that is 0), so its
  // cost does not grow with the queue; a complete pass (CompletePassLocked) follows on the
  // next lease tick, or at once when someone asks why a job waits.
  void ScheduleIfDirtyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher_complete_pass.cc.
  // Who asks for a complete pass: the lease tick runs none when the scheduler says it could
  // only explain (IncrementalScheduler::MightStartOrPreempt); a question (WaitingReason) runs
  // at most one per complete_pass_interval_ms.
  enum class PassFor { kTick, kQuestion };
  // One pass over every queued job when bounded passes ran since the last one: it places what
  // a bounded pass did not reach and explains every waiting job. mu_ is never held for
  // O(queue): the replica (planner_) replays the mirror's journal and plans the pass without
  // mu_, so events go on meanwhile; then the plan's placements are committed where they still
  // hold (IncrementalScheduler::Adopt), a slice per hold of mu_, then its preemptions, and its
  // reasons replace every reason but those that events changed since. Complete passes run one
  // at a time (plan_mu_); the lease tick's also brings the replica up to date when it plans
  // nothing, so the journal stays short. (WaitingReason does not wait for a pass being
  // planned: it takes plan_mu_ only when it is free.)
  void CompletePass(PassFor why) ABSL_LOCKS_EXCLUDED(mu_, plan_mu_);
  // CompletePass's body, for a caller that holds plan_mu_.
  void CompletePassPlanHeld(PassFor why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(plan_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Times one hold of mu_ by a complete pass into longest_pass_hold_ms_ (made after the lock,
  // so destroyed before it).
  class HoldTimer {
   public:
    explicit HoldTimer(Dispatcher* d) : d_(d), start_(std::chrono::steady_clock::now()) {}
    ~HoldTimer();

   private:
    Dispatcher* const d_;
    const std::chrono::steady_clock::time_point start_;
  };
  // A complete pass under way: whether it plans, and the mirror it plans (at `version` of the
  // scheduler, `epoch` of the mirror).
  struct PlanTicket {
    bool plan = false;
    int64_t now_ms = 0;
    uint64_t version = 0;
    uint64_t epoch = 0;
  };
  // Decides whether to plan and takes the journal for the replica.
  PlanTicket BeginPlanLocked(PassFor why, std::vector<scheduler::JournalOp>* ops)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // False (and the plan abandoned) when the mirror was rebuilt or reset since the ticket.
  bool PlanStillAppliesLocked(const PlanTicket& ticket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adopts the next slice of the plan's placements from *next on, and advances *next.
  bool AdoptSliceLocked(const scheduler::Decision& plan, size_t* next, PlanTicket* ticket)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adopts the plan's preemptions and takes its reasons; returns the reasons it replaced, for
  // the caller to free without mu_.
  std::map<std::string, std::string> FinishPlanLocked(scheduler::Decision plan,
                                                      const PlanTicket& ticket)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that a job's reason changed (or the job left the queue) while a plan was made.
  void NoteReasonLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (planning_) reasons_since_plan_.insert(job_id);
  }
  // Drops the journal when it outgrew its bound (replica_stale_).
  void BoundJournalLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Loads the queue from the store and rebuilds the mirror, on first use and after rare
  // events (orphans re-attached, dispatching turned on). False when the store failed.
  bool EnsureMirrorLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads every QUEUED job into queued_ (basic view, in pages): their attempts stay unknown.
  absl::Status LoadQueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the job's attempts from the store where `entry` lacks them. OK with them still
  // unknown when the job is no longer QUEUED there (cancelled meanwhile: nothing to place).
  absl::Status KnowAttemptsLocked(const std::string& job_id, QueueEntry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  scheduler::ClusterSnapshot SnapshotLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Usage on a worker changed: its free slots and GPUs go to the mirror before the next pass.
  void TouchWorkerLocked(const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushTouchedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MirrorQueuedLocked(const JobRecord& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MirrorRemovedLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // JobQueued's body: reads the job and queues it if it is still QUEUED.
  void JobQueuedLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the job and mirrors it if it is still QUEUED; runs no pass.
  void QueueFromStoreLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher_inbox.cc: jobs JobCreated could not queue at once.
  // Queues every job in the inbox (JobCreated's stamp rule), then runs a pass.
  void DrainInboxLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The inbox thread: waits until JobCreated found mu_ busy, then takes mu_ and drains.
  void InboxLoop();
  // The question thread: runs the complete passes WaitingReason asks for in the background.
  void QuestionLoop();
  // Waits until *wanted (inbox_wanted_ or question_wanted_) or the dispatcher stops, and
  // clears it; false when stopping.
  bool AwaitWanted(bool* wanted) ABSL_LOCKS_EXCLUDED(inbox_mu_);
  // The dispatcher read or changed jobs in the store that JobCreated may not have announced
  // yet: records it for CreationStamp.
  void NoteStoreReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    store_reads_.fetch_add(1, std::memory_order_release);
  }
  // Places and preempts as decided. False when a placement failed (retried on a later event).
  bool ApplyDecisionLocked(const scheduler::Decision& decision) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher_attempts.cc: placement and the ends of attempts.
  // Starts the next attempt of queued job `job_id` (`q`, its attempts known) on `gang`: the
  // store's SCHEDULED transition, then the attempt table. OK without an attempt when the job
  // left the queue meanwhile (cancelled).
  absl::Status PlaceLocked(const std::string& job_id, const QueueEntry& q,
                           const std::vector<std::string>& gang) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Per rank, the GPUs of a new attempt of a job with `resources` on `gang` (empty vectors for
  // a CPU job).
  absl::StatusOr<std::vector<std::vector<int>>> PickGpusLocked(const JobResources& resources,
                                                               const std::vector<std::string>& gang)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Withdraws unacknowledged ranks of a stopping attempt and wakes the workers that must stop
  // the others; the mirror counts the attempt as preempting from then on.
  void StopAttemptLocked(const std::string& job_id, Attempt& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishAttemptLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    FinishAttemptsLocked({job_id});
  }
  // Ends the attempts of these jobs whose ranks have all ended (the others, and unknown jobs,
  // are left alone): records each end in the store, all in one transaction, requeues those to
  // be retried or resumed, frees their room and forgets them. A job may be listed twice.
  void FinishAttemptsLocked(const std::vector<std::string>& job_ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The store steps that record the end of `a` (attempt_outcome.h), then its requeue if any.
  JobSteps AttemptEndSteps(const Attempt& a) const;
  absl::Status RequeueLocked(const std::string& job_id, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  JobStore* const store_;
  Clock* const clock_;
  EventHub* const hub_;
  const Options options_;

  // Held by the one complete pass that runs (CompletePass), around mu_.
  absl::Mutex plan_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // The scheduler's replica: the mirror as of the journal's last op it replayed.
  const std::unique_ptr<scheduler::IncrementalScheduler> planner_ ABSL_PT_GUARDED_BY(plan_mu_);

  absl::Mutex mu_;
  WorkerRegistry workers_ ABSL_GUARDED_BY(mu_);
  AttemptTable attempts_ ABSL_GUARDED_BY(mu_);
  const std::unique_ptr<scheduler::IncrementalScheduler> scheduler_ ABSL_PT_GUARDED_BY(mu_);
  std::map<std::string, std::string> waiting_ ABSL_GUARDED_BY(mu_);
  // The QUEUED jobs, by numeric id: loaded from the store with the mirror, then kept up to
  // date by JobQueued, RequeueLocked, placements and cancels.
  std::map<int64_t, QueueEntry> queued_ ABSL_GUARDED_BY(mu_);
  bool mirrored_ ABSL_GUARDED_BY(mu_) = false;  // False: rebuild the mirror before a pass.
  bool dirty_ ABSL_GUARDED_BY(mu_) = true;      // Something changed since the last pass.
  bool complete_ ABSL_GUARDED_BY(mu_) = true;   // No bounded pass since the last complete one.
  // When the last complete pass ran (clock_), for WaitingReason's rate limit.
  std::optional<int64_t> last_complete_ms_ ABSL_GUARDED_BY(mu_);
  int64_t complete_passes_ ABSL_GUARDED_BY(mu_) = 0;
  double longest_pass_hold_ms_ ABSL_GUARDED_BY(mu_) = 0;
  bool dispatching_ ABSL_GUARDED_BY(mu_) = true;
  std::set<std::string> touched_ ABSL_GUARDED_BY(mu_);  // Workers whose usage changed.
  // The mirror's changes that planner_ has not replayed yet (scheduler_->set_journal).
  std::vector<scheduler::JournalOp> journal_ ABSL_GUARDED_BY(mu_);
  // The journal grew past its bound and was dropped: the replica restarts from a snapshot.
  bool replica_stale_ ABSL_GUARDED_BY(mu_) = false;
  bool planning_ ABSL_GUARDED_BY(mu_) = false;  // A complete pass is being planned.
  // Jobs whose reason changed, or that left the queue, while planning_.
  absl::flat_hash_set<std::string> reasons_since_plan_ ABSL_GUARDED_BY(mu_);
  // Counts mirror rebuilds and Resets: a plan of an older mirror is not adopted.
  uint64_t mirror_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // Mirror rebuilds and cancels of jobs read from the store (NoteStoreReadLocked); written
  // under mu_, read without it by CreationStamp.
  std::atomic<uint64_t> store_reads_{0};

  struct Created {
    JobRecord job;
    uint64_t stamp;
  };
  // Taken after mu_ (DrainInboxLocked), never the other way round.
  absl::Mutex inbox_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::vector<Created> inbox_ ABSL_GUARDED_BY(inbox_mu_);
  bool inbox_wanted_ ABSL_GUARDED_BY(inbox_mu_) = false;  // JobCreated found mu_ busy.
  bool inbox_stop_ ABSL_GUARDED_BY(inbox_mu_) = false;    // Also stops the question thread.
  bool question_wanted_ ABSL_GUARDED_BY(inbox_mu_) = false;  // A question asked for a pass.
  // Last: they start once everything above exists.
  std::thread inbox_thread_;
  std::thread question_thread_;
};

}  // namespace lmtrain
