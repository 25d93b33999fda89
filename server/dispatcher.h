// Dispatcher: the worker registry, leases and job placement of lm-server. No gRPC or SQLite
// types: it talks to a JobStore, a Clock, an EventHub and a Scheduler given at construction
// (not owned).
//
// Workers register (slots, labels, rendezvous ports), then call Sync() as heartbeat and
// request for work; a worker silent for longer than lease_timeout_ms loses its lease and
// every rank it ran counts as lost. Placement is the Scheduler's (server/scheduler): each
// pass turns a snapshot of workers, active and queued jobs into placements (QUEUED ->
// SCHEDULED, one Assignment per rank, delivered on the workers' next Sync until they
// acknowledge it), preemptions and waiting reasons.
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
// timeouts are lost (the attempt is retried).
// A worker reporting a rank of an attempt that is not current is told to stop it.
//
// Thread-safe: one mutex guards the registry; store calls happen under it, so decisions and
// their application are serialised (two workers never receive the same rank).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/attempt_outcome.h"
#include "server/event_hub.h"
#include "server/scheduler/scheduler.h"
#include "storage/job_store.h"

namespace lmtrain {

struct DeviceInfo {
  std::string type;  // "cpu" | "cuda"
  int index = 0;
  std::string name;
  int64_t memory_bytes = 0;
  std::string uuid;  // cuda devices found through NVML; empty otherwise.
};

struct WorkerInfo {
  std::string name;
  std::string hostname;
  int slots = 1;
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> labels;
  std::string advertise_address;  // Empty: hostname.
  int rendezvous_port_base = 29500;
  int rendezvous_port_count = 100;
};

// One lm-train process of an attempt, as a worker names it. `gpus` (not part of its identity):
// the GPU indices the worker started it with, so that a server that restarted learns which
// GPUs its re-attached (or stale) ranks hold.
struct RankRef {
  std::string job_id;
  int rank = 0;
  int attempt = 0;
  std::vector<int> gpus;
  bool operator<(const RankRef& o) const {
    return std::tie(job_id, rank, attempt) < std::tie(o.job_id, o.rank, o.attempt);
  }
};

struct JobAssignment {
  std::string job_id;
  std::string spec_yaml;
  std::string output_dir;
  int attempt = 1;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;  // 0: single process, no rendezvous.
  bool resume = false;  // Continue from the newest complete checkpoint, if any.
  std::vector<int> gpus;  // The worker's cuda device indices this rank may use; empty: none.
};

struct SyncResult {
  std::vector<JobAssignment> assignments;
  std::vector<RankRef> stop;  // Stop exactly these ranks (job, rank, attempt) on this worker.
  bool reregister = false;    // Unknown worker id: register again.
  bool empty() const { return assignments.empty() && stop.empty() && !reregister; }
};

// What a worker reports about one rank.
struct JobStartedReport {
  int pid = 0;
};
struct JobExitedReport {
  int exit_code = 0;  // -1 when killed by a signal.
  int signal = 0;
  std::string error;
  bool cancelled = false;  // The worker stopped it because the server asked.
};
using WorkerReport =
    std::variant<JobStartedReport, TrainingMetrics, CheckpointRecord, LogEvent, JobExitedReport>;

struct WorkerStatus {
  std::string id;
  WorkerInfo info;
  int64_t last_seen_ms = 0;
  int used_slots = 0;
  int used_gpus = 0;
  std::vector<std::string> running_job_ids;
};

class Dispatcher {
 public:
  struct Options {
    std::string artifacts_dir;  // Jobs write to artifacts_dir/jobs/<id>.
    int64_t lease_timeout_ms = 15000;
    // Fair-share weights and running-job limits per user (jobs without a user are
    // "anonymous"); users not listed get default_user.
    std::map<std::string, scheduler::UserPolicy> users;
    scheduler::UserPolicy default_user;
  };

  Dispatcher(JobStore* store, Clock* clock, EventHub* hub, const scheduler::Scheduler* scheduler,
             Options options);
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Requeues PREEMPTED/RETRYING jobs and adopts SCHEDULED/RUNNING ones as orphans. Call once
  // at start-up, before serving.
  absl::Status Recover();

  // Returns a new worker id. `running`: ranks it still runs (re-registration after a restart).
  std::string RegisterWorker(const WorkerInfo& info, const std::vector<RankRef>& running);

  // Heartbeat + placement. Never blocks on the hub; callers long-poll with the hub's
  // kWorkKey version (snapshot before calling Sync, wait after an empty result).
  absl::StatusOr<SyncResult> Sync(const std::string& worker_id,
                                  const std::vector<RankRef>& running);

  // Stores a worker's reports for one rank. Returns true when that rank should stop.
  // Unavailable: the worker id is unknown (server restart, lapsed lease) — keep the reports
  // until the worker has registered again. NotFound: unknown job. FailedPrecondition: the
  // rank is not (or no longer) this worker's in the job's current attempt — the caller
  // should stop it and drop its reports.
  absl::StatusOr<bool> ReportEvents(const std::string& worker_id, const RankRef& rank,
                                    const std::vector<WorkerReport>& reports);

  // Cancels a job in any non-terminal state: at once when no rank runs, else after its ranks
  // have stopped. Returns the state after the call. FailedPrecondition if already terminal.
  absl::StatusOr<JobState> Cancel(const std::string& job_id, const std::string& reason);

  // Drops workers (and orphaned ranks) whose lease ran out, then runs a scheduling pass.
  void ExpireLeases();

  std::vector<WorkerStatus> ListWorkers();

  // A job was just created QUEUED (JobManager::Submit): it joins the in-memory queue the
  // scheduling passes work from. Ignored when the job is no longer QUEUED or unknown.
  void JobQueued(const std::string& job_id);

  // Why a QUEUED job waits (the last scheduling pass's explanation); "" if unknown.
  std::string WaitingReason(const std::string& job_id);

 private:
  struct Rank {
    std::string worker_id;  // "" while an orphan nobody has claimed.
    int local_rank = 0;
    bool delivered = false;  // Acknowledged by the worker (listed running or reported).
    bool started = false;
    std::optional<RankExit> exit;
    std::vector<int> gpus;  // Indices on its worker; held until `exit`.
  };
  struct Active {
    JobRecord job;  // As of placement (or recovery).
    int attempt = 0;
    std::vector<std::string> gang;  // Worker per gang member (rank / slots_per_worker).
    std::vector<Rank> ranks;
    std::string master_addr;
    int master_port = 0;
    bool cancel = false;
    std::string cancel_reason;
    bool preempt = false;
    std::string preempt_reason;
    std::optional<int> first_failed;
    int64_t orphan_deadline_ms = 0;  // > 0: recovered after a restart, not all claimed.
    bool stopping() const { return cancel || preempt || first_failed.has_value(); }
  };
  struct Worker {
    WorkerInfo info;
    int64_t last_seen_ms = 0;
    std::set<int> ports_in_use;
    std::set<int> stale_gpus;  // Held by ranks it still runs that are being stopped.
  };

  // dispatcher.cc: registry, reports, leases.
  void AttachLocked(const std::string& worker_id, const std::vector<RankRef>& running,
                    SyncResult* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyReportLocked(Active& active, int rank, const WorkerReport& report,
                         std::vector<EventPayload>* events) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RankEndedLocked(Active& active, int rank, RankExit exit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LoseWorkerLocked(const std::string& worker_id, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int UsedSlotsLocked(const std::string& worker_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // GPU indices held on each worker: by ranks that have not ended, and stale ones.
  std::map<std::string, std::set<int>> HeldGpusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // dispatcher_attempts.cc: scheduling passes, placement, the end of attempts.
  void SchedulePassLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  scheduler::ClusterSnapshot SnapshotLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PlaceLocked(const JobRecord& job, const std::vector<std::string>& gang)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Per rank, the GPUs of a new attempt of `job` on `gang` (empty vectors for a CPU job).
  absl::StatusOr<std::vector<std::vector<int>>> PickGpusLocked(const JobRecord& job,
                                                               const std::vector<std::string>& gang)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StopAttemptLocked(Active& active) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishAttemptLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FinishAttemptLocked(Active& active) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RequeueLocked(const std::string& job_id, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<int> TakePortLocked(const std::string& worker_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  JobStore* const store_;
  Clock* const clock_;
  EventHub* const hub_;
  const scheduler::Scheduler* const scheduler_;
  const Options options_;

  absl::Mutex mu_;
  uint64_t next_worker_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> waiting_ ABSL_GUARDED_BY(mu_);
  // The QUEUED jobs, by numeric id: loaded from the store on the first pass, then kept up to
  // date by JobQueued, RequeueLocked, placements and cancels, so that a pass does not read and
  // decode every queued job from the store.
  std::map<int64_t, JobRecord> queued_ ABSL_GUARDED_BY(mu_);
  bool queued_loaded_ ABSL_GUARDED_BY(mu_) = false;
  bool dirty_ ABSL_GUARDED_BY(mu_) = true;               // Something changed since the last pass.
  uint64_t seen_work_version_ ABSL_GUARDED_BY(mu_) = 0;  // Hub kWorkKey at the last pass.
};

}  // namespace lmtrain
