// WorkerAgent: the lm-worker main loop. Registers with lm-server (slots, labels, the cpu and the
// GPUs its GpuInventory lists), then long-polls Sync() (which doubles as its heartbeat), starts a
// JobRunner per assignment and forwards cancels. Running ranks are reported with the GPU indices
// they were started with, so that a restarted server knows which GPUs are taken.
//
//   Run(): [register] -> loop { Sync -> start/cancel runners -> reap finished } -> Stop()
//          ^  server restarted ("reregister") or unreachable: register again, listing the
//          |  jobs still running so the server re-attaches them.
//
// The agent speaks plain messages (worker_messages.h) through its ServerClient; no proto type
// reaches it.
// Threads: Run() owns the agent thread; each JobRunner has its own. Stop() may be called
// from any thread (e.g. a signal-watching thread) and makes Run() return after shutting the
// children down (SIGTERM, then SIGKILL after kill_grace).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/process_launcher.h"
#include "worker/agent/gpu_inventory.h"
#include "worker/agent/job_runner.h"
#include "worker/agent/server_client.h"
#include "worker/agent/worker_messages.h"

namespace lmtrain {

class WorkerAgent {
 public:
  struct Options {
    std::string name;          // Shown by the server; default: hostname.
    int slots = 1;             // Jobs run at once.
    std::string work_dir;      // Scratch space: jobs/ID/job.yaml.
    std::string trainer_path;  // lm-train executable.
    absl::Duration kill_grace = absl::Seconds(10);
    int sync_wait_ms = 1000;                    // Long-poll length (also the heartbeat period).
    // Pause after a failed Register or Sync, doubling per failure up to retry_backoff_max.
    absl::Duration retry_backoff = absl::Milliseconds(100);
    absl::Duration retry_backoff_max = absl::Seconds(1);
    std::map<std::string, std::string> labels;  // Matched by job selectors.
    std::string advertise_address;     // How other workers reach this one; default hostname.
    int rendezvous_port_base = 29500;  // Ports for the c10d TCPStore of jobs whose rank 0
    int rendezvous_port_count = 100;   // runs here: [base, base + count).
    ArtifactCache* artifacts = nullptr;  // Not owned; see JobRunner::Options::artifacts.
  };

  // None owned; all must outlive the agent. The inventory is read at each registration.
  WorkerAgent(ServerClient* client, ProcessLauncher* launcher, GpuInventory* gpus,
              Options options);
  WorkerAgent(const WorkerAgent&) = delete;
  WorkerAgent& operator=(const WorkerAgent&) = delete;

  void Run();
  void Stop() { stop_.store(true); }
  std::string worker_id() const;

 private:
  WorkerRegistration Registration();
  bool Register();
  void Reap();
  void Apply(const SyncOrders& orders);
  std::vector<RunningRank> Running() const;

  ServerClient* const client_;
  ProcessLauncher* const launcher_;
  GpuInventory* const gpus_;
  const Options options_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex id_mu_;
  std::string worker_id_ ABSL_GUARDED_BY(id_mu_);
  bool refused_shown_ = false;  // Agent thread only: a refused token was reported.
  bool gpu_reason_shown_ = false;  // Agent thread only: why no GPUs were listed was reported.
  // Agent thread only. Key: RunnerKey (job, rank, attempt).
  std::map<std::string, std::unique_ptr<JobRunner>> runners_;
  std::set<std::string> started_;  // Every key ever started: a re-sent assignment is ignored.
};

}  // namespace lmtrain
