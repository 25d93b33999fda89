// JobRunner: runs one job's lm-train child for the worker agent and relays what it says.
//
//   Start() --> [launch] --> RUNNING --(child exits / all pipes closed)--> [report exit] --> done
//                              |  Cancel(): SIGTERM to the child's group,
//                              |  SIGKILL after kill_grace if it is still there.
//
// The runner's own thread reads the child's stdout/stderr (log lines) and events pipe
// (metrics, checkpoints, error), batches them as RankEvents and sends them with
// ServerClient::Report;
// the exit report is retried until the server takes it (or the agent shuts down). A server
// that refuses the reports for good (FailedPrecondition / NotFound / PermissionDenied: the
// attempt is no longer current) gets the child stopped and the reports dropped.
// Multi-rank jobs: the child gets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
// (torchrun's names); assignment.resume adds --auto-resume. Every child gets
// CUDA_VISIBLE_DEVICES set to exactly the assignment's GPU indices ("" when it has none, so a
// CPU job can never touch a GPU) and CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA then numbers devices as
// NVML does); both replace any value the worker itself runs with. Each rank logs to
// OUTPUT_DIR/logs/lm-train[-rankN].log.
// Artifact references in the spec are fetched and replaced by local paths first (Options::
// artifacts); a failure to fetch ends the attempt like a failed launch (exit code 127).
// Files: WORK_DIR/jobs/ID/attempt-A-rank-R/job.yaml (the spec) and OUTPUT_DIR/logs/lm-train.log
// (all output).
// Thread-safe: Cancel(), done() and Shutdown() may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/process_launcher.h"
#include "worker/agent/artifact_cache.h"
#include "worker/agent/server_client.h"
#include "worker/agent/worker_messages.h"

namespace lmtrain {

class JobRunner {
 public:
  struct Options {
    std::string trainer_path;  // lm-train executable.
    std::string work_dir;
    absl::Duration kill_grace = absl::Seconds(10);
    absl::Duration flush_interval = absl::Milliseconds(200);
    // Fetches the artifacts a spec names before launch (not owned). Null: a spec with
    // artifact references fails to launch.
    ArtifactCache* artifacts = nullptr;
  };

  // worker_id() is read for every report (the id changes if the agent re-registers).
  JobRunner(RankAssignment assignment, std::function<std::string()> worker_id, ServerClient* client,
            ProcessLauncher* launcher, Options options);
  ~JobRunner();  // Joins the thread (kills the child first if still running).
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  void Start();
  void Cancel() { cancel_requested_.store(true); }
  // Stop without a cancel (agent shutting down): the child gets SIGTERM then SIGKILL.
  void Shutdown();
  bool done() const { return done_.load(); }
  const std::string& job_id() const { return assignment_.job_id; }
  const RankAssignment& assignment() const { return assignment_; }

 private:
  class Relay;  // Line splitting, batching and reporting (job_runner.cc).

  void Run();
  absl::StatusOr<std::unique_ptr<ChildProcess>> Launch();
  void Supervise(ChildProcess* child, Relay* relay);

  const RankAssignment assignment_;
  const std::function<std::string()> worker_id_;
  ServerClient* const client_;
  ProcessLauncher* const launcher_;
  const Options options_;
  std::atomic<bool> cancel_requested_{false};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> done_{false};
  // The cached artifacts the child uses: held from launch until it exits (never evicted).
  ArtifactCache::Pins artifact_pins_;
  std::thread thread_;
};

}  // namespace lmtrain
