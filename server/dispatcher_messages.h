// What the Dispatcher (dispatcher.h) and the WorkerService exchange about workers and their
// ranks: the work a Sync hands a worker (an assignment per rank, ranks to stop), what a
// worker reports about a rank, and a worker's status as ListWorkers shows it. Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/attempt_table.h"
#include "server/worker_registry.h"
#include "storage/job_store.h"

namespace lmtrain {

struct JobAssignment {
  std::string job_id;
  std::string spec_yaml;
  std::string output_dir;
  int attempt = 1;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;    // 0: single process, no rendezvous.
  bool resume = false;    // Continue from the newest complete checkpoint, if any.
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

}  // namespace lmtrain
