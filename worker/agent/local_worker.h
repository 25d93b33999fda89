// LocalWorker: a worker agent inside lm-server's process (`lm-server --local-worker N`, the
// embedded default: one command for a working system). It owns everything a WorkerAgent needs
// (the gRPC ServerClient, the artifact client and cache, the process launcher, the machine's
// GPU inventory) and runs the agent on its own thread. It reaches the server only through the
// channels it is given, like any other worker: the server side stays free of worker code.
//
//   Start() -> agent thread: register, sync, run ranks -> Stop() (or destruction) -> stopped
//
// Stop() shuts the running lm-train children down and reports their exits before it returns,
// so stop the local worker before the server it reports to.
// Thread-safe: Stop() may be called from any thread, once or more.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "artifacts/artifact_client.h"
#include "common/process_launcher.h"
#include "worker/agent/artifact_cache.h"
#include "worker/agent/grpc_server_client.h"
#include "worker/agent/nvml_gpu_inventory.h"
#include "worker/agent/worker_agent.h"

namespace lmtrain {

class LocalWorker {
 public:
  struct Options {
    int slots = 1;             // Jobs run at once; must be > 0.
    std::string work_dir;      // Required: scratch space and WORK_DIR/artifact-cache.
    std::string trainer_path;  // lm-train; "" = DefaultTrainerPath().
    absl::Duration kill_grace = absl::Seconds(10);  // SIGTERM -> SIGKILL on cancel.
    // Most blob bytes kept in WORK_DIR/artifact-cache, least recently used evicted first
    // (ArtifactCache::Options::max_bytes); 0: no limit; must be >= 0.
    int64_t artifact_cache_max_bytes = ArtifactCache::kDefaultMaxBytes;
  };
  // Makes a fresh channel to the server on each call, from any thread.
  using ChannelMaker = GrpcServerClient::ChannelMaker;

  // Creates work_dir and starts the agent (named "local", advertised as 127.0.0.1) against the
  // server `channels` reach. InvalidArgument for slots <= 0, no work_dir or a negative
  // artifact_cache_max_bytes; Internal when work_dir cannot be created.
  static absl::StatusOr<std::unique_ptr<LocalWorker>> Start(ChannelMaker channels, Options options);
  ~LocalWorker();  // Stop().
  LocalWorker(const LocalWorker&) = delete;
  LocalWorker& operator=(const LocalWorker&) = delete;

  void Stop();
  std::string worker_id() const { return agent_->worker_id(); }  // "" until registered.

 private:
  LocalWorker(ChannelMaker channels, const Options& options);

  GrpcServerClient client_;
  ArtifactClient artifact_client_;
  ArtifactCache artifact_cache_;
  PosixProcessLauncher launcher_;
  NvmlGpuInventory gpus_;  // The machine's GPUs.
  std::unique_ptr<WorkerAgent> agent_;
  absl::Mutex stop_mu_;  // Serializes Stop(): the second caller waits for the join.
  std::thread thread_;
};

}  // namespace lmtrain
