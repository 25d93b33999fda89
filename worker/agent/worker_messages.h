// What the worker agent and lm-server's WorkerService say to each other, as plain C++ types.
// The agent's core (WorkerAgent, JobRunner) works on these only; lmtrain.v1 messages appear at
// the gRPC edge alone (GrpcServerClient), mapped by worker/agent/proto_convert.h.
//
//   Register(WorkerRegistration) -> worker id
//   Sync(WorkerSync) -> SyncOrders        (long-poll; also the heartbeat that renews leases)
//   Report(RankEventBatch) -> ReportReply (one rank's events, in order)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "common/device_info.h"
#include "common/training_metrics.h"

namespace lmtrain {

// One lm-train process this worker runs: a rank of one attempt of a job. `gpus` are the GPU
// indices it was started with (its RankAssignment::gpus); a stop order leaves them empty.
struct RunningRank {
  std::string job_id;
  int rank = 0;
  int attempt = 0;
  std::vector<int> gpus;
};

struct WorkerRegistration {
  std::string name;
  std::string hostname;
  int slots = 1;
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> labels;  // Matched by job selectors (e.g. gpu: h100).
  std::string advertise_address;              // How other workers reach this one.
  int rendezvous_port_base = 29500;           // c10d TCPStore ports of jobs whose rank 0
  int rendezvous_port_count = 100;            // runs here: [base, base + count).
  std::vector<RunningRank> running;           // Ranks it still runs (re-registration).
};

// The heartbeat and long-poll: the server answers once it has orders, or after wait_ms.
struct WorkerSync {
  std::string worker_id;
  std::vector<RunningRank> running;
  int free_slots = 0;
  int wait_ms = 1000;
};

// One rank to start: lm-train with RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT.
struct RankAssignment {
  std::string job_id;
  std::string spec_yaml;
  std::string output_dir;
  int attempt = 0;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
  bool resume = false;    // --auto-resume: continue from the newest complete checkpoint.
  std::vector<int> gpus;  // CUDA_VISIBLE_DEVICES, exactly ("" when empty: no GPU).
};

struct SyncOrders {
  std::vector<RankAssignment> assignments;  // Re-sent until the worker reports them running.
  std::vector<RunningRank> stop;  // Stop exactly these (job, rank, attempt): SIGTERM, SIGKILL.
  bool reregister = false;        // The server does not know this worker id (it restarted).
};

// What a worker reports about one rank.
struct RankStarted {
  int pid = 0;
};
struct RankCheckpoint {
  int64_t step = 0;
  std::string path;
  int64_t created_ms = 0;  // Unix milliseconds.
};
struct RankLog {
  std::string stream;  // "stdout" | "stderr"
  std::string text;
};
struct RankExited {
  int exit_code = 0;  // -1 when killed by a signal.
  int signal = 0;
  std::string error;       // The trainer's own error text, or the last stderr lines.
  bool cancelled = false;  // The worker stopped it because the server asked.
};
using RankEvent = std::variant<RankStarted, TrainingMetrics, RankCheckpoint, RankLog, RankExited>;

struct RankEventBatch {
  std::string worker_id;
  std::string job_id;
  int rank = 0;
  int attempt = 0;
  std::vector<RankEvent> events;
};
struct ReportReply {
  bool cancel = false;  // The job was cancelled meanwhile: stop the rank.
};

}  // namespace lmtrain
