// lm-worker: the agent that runs lm-train jobs for lm-server on this machine.
//   lm-worker --server HOST:PORT[,HOST:PORT...] --work-dir DIR --slots N [--trainer PATH]
//             [--labels k=v,...] [--advertise-address HOST] [--rendezvous-ports LO-HI]
//             [--gpus auto|none|0,1,...] [--artifact-cache-max-bytes N]
//             [--token T (env LMTRAIN_WORKER_TOKEN)] [--tls-ca F [--tls-cert F --tls-key F]]
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "common/termination_signals.h"
#include "common/trainer_path.h"
#include "worker/agent/grpc_server_client.h"
#include "worker/agent/nvml_gpu_inventory.h"
#include "worker/agent/worker_agent.h"

int main(int argc, char** argv) {
  using namespace lmtrain;
  std::string server = "127.0.0.1:50051", work_dir = "./lm-worker", trainer = DefaultTrainerPath();
  std::string name, labels, advertise, ports = "29500-29599", gpus = "auto";
  ClientChannelOptions connection;
  if (const char* env_token = std::getenv("LMTRAIN_WORKER_TOKEN")) connection.token = env_token;
  int64_t slots = 1, cache_max_bytes = ArtifactCache::kDefaultMaxBytes;
  double kill_grace_s = 10;
  CommandLine cl("lm-worker", "runs lm-train jobs handed out by lm-server");
  cl.AddString("server", &server,
               "lm-server address HOST:PORT, or replicas HOST:PORT,HOST:PORT (follows the active)");
  cl.AddString("work-dir", &work_dir, "scratch folder for job files");
  cl.AddInt("slots", &slots, "jobs to run at once");
  cl.AddString("name", &name, "worker name shown by the server (default: hostname)");
  cl.AddString("trainer", &trainer, "path of the lm-train executable");
  cl.AddDouble("kill-grace-seconds", &kill_grace_s, "SIGTERM -> SIGKILL delay on cancel");
  cl.AddInt("artifact-cache-max-bytes", &cache_max_bytes,
            "most bytes of fetched artifacts kept in WORK_DIR/artifact-cache, least recently "
            "used evicted first (default 50 GiB; 0: no limit)");
  cl.AddString("labels", &labels, "worker labels for job selectors: k=v,k2=v2");
  cl.AddString("advertise-address", &advertise,
               "address other workers reach this one at (default: hostname)");
  cl.AddString("rendezvous-ports", &ports, "port range LO-HI for multi-worker rendezvous");
  cl.AddString("gpus", &gpus,
               "GPUs jobs may use: auto (found through the NVIDIA driver), none, or indices 0,1");
  cl.AddString("token", &connection.token, "worker bearer token (env LMTRAIN_WORKER_TOKEN)");
  cl.AddString("tls-ca", &connection.tls_ca, "PEM CA of the server's certificate; turns TLS on");
  cl.AddString("tls-cert", &connection.tls_cert, "PEM client certificate for mutual TLS");
  cl.AddString("tls-key", &connection.tls_key, "PEM private key of --tls-cert");
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  if (slots <= 0) {
    std::cerr << "--slots must be > 0\n";
    return 2;
  }
  if (cache_max_bytes < 0) {
    std::cerr << "lm-worker: --artifact-cache-max-bytes must be >= 0 (0: no limit), got "
              << cache_max_bytes << "\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) {
    std::cerr << "cannot create --work-dir " << work_dir << ": " << ec.message() << "\n";
    return 1;
  }
  WorkerAgent::Options options;
  for (absl::string_view item : absl::StrSplit(labels, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      std::cerr << "--labels: expected k=v, got '" << item << "'\n";
      return 2;
    }
    options.labels[kv.first] = kv.second;
  }
  int lo = 0, hi = 0;
  std::pair<std::string, std::string> range = absl::StrSplit(ports, absl::MaxSplits('-', 1));
  if (!absl::SimpleAtoi(range.first, &lo) || !absl::SimpleAtoi(range.second, &hi) || lo <= 0 ||
      hi < lo || hi > 65535) {
    std::cerr << "--rendezvous-ports: expected LO-HI, got '" << ports << "'\n";
    return 2;
  }
  options.rendezvous_port_base = lo;
  options.rendezvous_port_count = hi - lo + 1;
  options.advertise_address = advertise;
  connection.target = server;
  auto channels = ClientChannelFactory::Create(connection);
  if (!channels.ok()) {
    std::cerr << "lm-worker: " << channels.status().message() << "\n";
    return 2;
  }
  NvmlGpuInventory nvml;
  std::optional<DeclaredGpuInventory> declared;
  if (gpus != "auto") {
    auto indices = ParseGpuList(gpus);
    if (!indices.ok()) {
      std::cerr << indices.status().message() << "\n";
      return 2;
    }
    declared.emplace(*std::move(indices), &nvml);
  }
  GpuInventory* inventory = declared.has_value() ? static_cast<GpuInventory*>(&*declared) : &nvml;
  GrpcServerClient client(*channels);
  // Artifacts the jobs name (uploaded by lmctl) are fetched into WORK_DIR/artifact-cache.
  ArtifactClient artifact_client(channels->NewChannel(), {});
  ArtifactCache::Options cache_options;
  cache_options.max_bytes = cache_max_bytes;
  ArtifactCache artifact_cache(&artifact_client,
                               std::filesystem::absolute(work_dir).string() + "/artifact-cache",
                               cache_options);
  options.artifacts = &artifact_cache;
  PosixProcessLauncher launcher;
  options.name = name;
  options.slots = static_cast<int>(slots);
  options.work_dir = std::filesystem::absolute(work_dir).string();
  options.trainer_path = trainer;
  options.kill_grace = absl::Seconds(kill_grace_s);
  WorkerAgent agent(&client, &launcher, inventory, options);
  WatchTerminationSignals([&agent](int) { agent.Stop(); });
  std::cerr << "lm-worker: serving " << server << " with " << slots << " slot(s)\n";
  agent.Run();
  std::cerr << "lm-worker: stopped\n";
  return 0;
}
