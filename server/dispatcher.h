// Dispatcher: the worker registry and job placement of lm-server. No gRPC or SQLite types:
// it talks to a JobStore, a Clock and an EventHub given at construction (not owned).
//
// Workers register, then call Sync() as heartbeat + request for work. A worker holds a lease
// while it syncs; ExpireLeases() (called periodically) drops workers silent for longer than
// lease_timeout_ms and fails their running jobs (cancelled ones become CANCELLED).
//
// Job placement (this version): QUEUED jobs by priority (high first), then submit order,
// onto any worker with a free slot. A worker's job events (started, metrics, checkpoints,
// logs, exit) arrive through ReportEvents and are written to the store.
//
// After a server restart, Recover() adopts RUNNING jobs as "orphans": a worker that
// re-registers (or syncs) listing one of them re-attaches it; orphans nobody claims within
// the lease timeout fail with "worker lost".
//
// Thread-safe: one mutex guards the registry; store calls happen under it so placement is
// serialised (two workers never receive the same job).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/event_hub.h"
#include "storage/job_store.h"

namespace lmtrain {

struct DeviceInfo {
  std::string type;  // "cpu" | "cuda"
  int index = 0;
  std::string name;
};

struct WorkerInfo {
  std::string name;
  std::string hostname;
  int slots = 1;
  std::vector<DeviceInfo> devices;
};

struct JobAssignment {
  std::string job_id;
  std::string spec_yaml;
  std::string output_dir;
  int attempt = 1;
};

struct SyncResult {
  std::vector<JobAssignment> assignments;
  std::vector<std::string> cancel_job_ids;
  bool reregister = false;  // Unknown worker id: register again.
  bool empty() const { return assignments.empty() && cancel_job_ids.empty() && !reregister; }
};

// What a worker reports about one of its jobs.
struct JobStartedReport { int pid = 0; };
struct JobExitedReport {
  int exit_code = 0;  // -1 when killed by a signal.
  int signal = 0;
  std::string error;
  bool cancelled = false;
};
using WorkerReport =
    std::variant<JobStartedReport, TrainingMetrics, CheckpointRecord, LogEvent, JobExitedReport>;

struct WorkerStatus {
  std::string id;
  WorkerInfo info;
  int64_t last_seen_ms = 0;
  std::vector<std::string> running_job_ids;
};

class Dispatcher {
 public:
  struct Options {
    std::string artifacts_dir;       // Jobs write to artifacts_dir/jobs/<id>.
    int64_t lease_timeout_ms = 15000;
  };

  Dispatcher(JobStore* store, Clock* clock, EventHub* hub, Options options);
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Adopts the store's RUNNING jobs as orphans (call once at start-up).
  absl::Status Recover();

  // Returns a new worker id. running_job_ids: jobs it still runs (re-registration).
  std::string RegisterWorker(const WorkerInfo& info,
                             const std::vector<std::string>& running_job_ids);

  // Heartbeat + placement. Never blocks on the hub; callers long-poll with the hub's
  // kWorkKey version (snapshot before calling Sync, wait after an empty result).
  absl::StatusOr<SyncResult> Sync(const std::string& worker_id,
                                  const std::vector<std::string>& running_job_ids,
                                  int free_slots);

  // Stores a worker's reports for job_id. Returns true when the job should be stopped
  // (cancel requested). NotFound: unknown job. PermissionDenied: job not on that worker.
  absl::StatusOr<bool> ReportEvents(const std::string& worker_id, const std::string& job_id,
                                    const std::vector<WorkerReport>& reports);

  // Asks the job's worker to stop a RUNNING job; it becomes CANCELLED when the worker
  // reports the exit (or its lease expires).
  void RequestCancel(const std::string& job_id);

  // Drops workers (and orphans) whose lease ran out; fails or cancels their jobs.
  void ExpireLeases();

  std::vector<WorkerStatus> ListWorkers();

 private:
  struct Worker {
    WorkerInfo info;
    int64_t last_seen_ms = 0;
    absl::flat_hash_set<std::string> running;
  };

  void AttachLocked(const std::string& worker_id, const std::vector<std::string>& job_ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<JobAssignment>> PlaceLocked(const std::string& worker_id,
                                                         int free_slots)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FinishLocked(const std::string& job_id, const JobExitedReport& exit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailLostJobLocked(const std::string& job_id, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  JobStore* const store_;
  Clock* const clock_;
  EventHub* const hub_;
  const Options options_;

  absl::Mutex mu_;
  uint64_t next_worker_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> job_worker_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> cancel_requested_ ABSL_GUARDED_BY(mu_);
  // Orphaned RUNNING jobs after a restart -> deadline (ms) to be re-attached.
  absl::flat_hash_map<std::string, int64_t> orphans_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lmtrain
