// lm-worker: the agent that runs lm-train jobs for lm-server on this machine.
//   lm-worker --server HOST:PORT[,HOST:PORT...] --work-dir DIR --slots N [--trainer PATH]
//             [--labels k=v,...] [--advertise-address HOST] [--rendezvous-ports LO-HI]
//             [--gpus auto|none|0,1,...] [--artifact-cache-max-bytes N]
//             [--token T (env LMTRAIN_WORKER_TOKEN)] [--tls-ca F [--tls-cert F --tls-key F]]
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/command_line.h"
#include "common/termination_signals.h"
#include "worker/agent/grpc_server_client.h"
#include "worker/agent/nvml_gpu_inventory.h"
#include "worker/agent/worker_agent.h"
#include "worker/agent/worker_flags.h"

int main(int argc, char** argv) {
  using namespace lmtrain;
  WorkerFlags flags;
  CommandLine cl("lm-worker", "runs lm-train jobs handed out by lm-server");
  AddWorkerFlags(&cl, &flags);
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  if (absl::Status s = FinishWorkerFlags(&flags); !s.ok()) {
    std::cerr << "lm-worker: " << s.message() << "\n";
    return 2;
  }
  WorkerAgent::Options& options = flags.options;
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) {
    std::cerr << "lm-worker: cannot create --work-dir " << flags.work_dir << ": " << ec.message()
              << "\n";
    return 1;
  }
  auto channels = ClientChannelFactory::Create(flags.connection);
  if (!channels.ok()) {
    std::cerr << "lm-worker: " << channels.status().message() << "\n";
    return 2;
  }
  NvmlGpuInventory nvml;
  std::optional<DeclaredGpuInventory> declared;
  if (flags.declared_gpus.has_value()) declared.emplace(*flags.declared_gpus, &nvml);
  GpuInventory* inventory = declared.has_value() ? static_cast<GpuInventory*>(&*declared) : &nvml;
  GrpcServerClient client(*channels);
  // Artifacts the jobs name (uploaded by lmctl) are fetched into WORK_DIR/artifact-cache.
  ArtifactClient artifact_client(channels->NewChannel(), {});
  ArtifactCache::Options cache_options;
  cache_options.max_bytes = flags.cache_max_bytes;
  ArtifactCache artifact_cache(&artifact_client, options.work_dir + "/artifact-cache",
                               cache_options);
  options.artifacts = &artifact_cache;
  PosixProcessLauncher launcher;
  WorkerAgent agent(&client, &launcher, inventory, options);
  WatchTerminationSignals([&agent](int) { agent.Stop(); });
  std::cerr << "lm-worker: serving " << flags.connection.target << " with " << options.slots
            << " slot(s)\n";
  agent.Run();
  std::cerr << "lm-worker: stopped\n";
  return 0;
}
