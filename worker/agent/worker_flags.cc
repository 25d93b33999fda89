#include "worker/agent/worker_flags.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/trainer_path.h"
#include "worker/agent/artifact_cache.h"
#include "worker/agent/gpu_inventory.h"

namespace lmtrain {
namespace {

absl::Status ParseLabels(const std::string& labels, WorkerAgent::Options* options) {
  for (absl::string_view item : absl::StrSplit(labels, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--labels: expected k=v, got '", item, "'"));
    }
    options->labels[kv.first] = kv.second;
  }
  return absl::OkStatus();
}

absl::Status ParsePorts(const std::string& ports, WorkerAgent::Options* options) {
  int lo = 0, hi = 0;
  std::pair<std::string, std::string> range = absl::StrSplit(ports, absl::MaxSplits('-', 1));
  if (!absl::SimpleAtoi(range.first, &lo) || !absl::SimpleAtoi(range.second, &hi) || lo <= 0 ||
      hi < lo || hi > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rendezvous-ports: expected LO-HI, got '", ports, "'"));
  }
  options->rendezvous_port_base = lo;
  options->rendezvous_port_count = hi - lo + 1;
  return absl::OkStatus();
}

}  // namespace

WorkerFlags::WorkerFlags()
    : cache_max_bytes(ArtifactCache::kDefaultMaxBytes), trainer(DefaultTrainerPath()) {
  if (const char* env_token = std::getenv("LMTRAIN_WORKER_TOKEN")) connection.token = env_token;
}

void AddWorkerFlags(CommandLine* cl, WorkerFlags* f) {
  cl->AddString("server", &f->connection.target,
                "lm-server address HOST:PORT, or replicas HOST:PORT,HOST:PORT (follows the "
                "active)");
  cl->AddString("work-dir", &f->work_dir, "scratch folder for job files");
  cl->AddInt("slots", &f->slots, "jobs to run at once");
  cl->AddString("name", &f->name, "worker name shown by the server (default: hostname)");
  cl->AddString("trainer", &f->trainer, "path of the lm-train executable");
  cl->AddDouble("kill-grace-seconds", &f->kill_grace_s, "SIGTERM -> SIGKILL delay on cancel");
  cl->AddInt("artifact-cache-max-bytes", &f->cache_max_bytes,
             "most bytes of fetched artifacts kept in WORK_DIR/artifact-cache, least recently "
             "used evicted first (default 50 GiB; 0: no limit)");
  cl->AddString("labels", &f->labels, "worker labels for job selectors: k=v,k2=v2");
  cl->AddString("advertise-address", &f->advertise,
                "address other workers reach this one at (default: hostname)");
  cl->AddString("rendezvous-ports", &f->ports, "port range LO-HI for multi-worker rendezvous");
  cl->AddString("gpus", &f->gpus,
                "GPUs jobs may use: auto (found through the NVIDIA driver), none, or indices 0,1");
  cl->AddString("token", &f->connection.token, "worker bearer token (env LMTRAIN_WORKER_TOKEN)");
  cl->AddString("tls-ca", &f->connection.tls_ca,
                "PEM CA of the server's certificate; turns TLS on");
  cl->AddString("tls-cert", &f->connection.tls_cert, "PEM client certificate for mutual TLS");
  cl->AddString("tls-key", &f->connection.tls_key, "PEM private key of --tls-cert");
}

absl::Status FinishWorkerFlags(WorkerFlags* f) {
  if (f->slots <= 0) return absl::InvalidArgumentError("--slots must be > 0");
  if (f->cache_max_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--artifact-cache-max-bytes must be >= 0 (0: no limit), got ", f->cache_max_bytes));
  }
  WorkerAgent::Options& o = f->options;
  RETURN_IF_ERROR(ParseLabels(f->labels, &o));
  RETURN_IF_ERROR(ParsePorts(f->ports, &o));
  if (f->gpus != "auto") {
    ASSIGN_OR_RETURN(std::vector<int> indices, ParseGpuList(f->gpus));
    f->declared_gpus = std::move(indices);
  }
  o.advertise_address = f->advertise;
  o.name = f->name;
  o.slots = static_cast<int>(f->slots);
  o.work_dir = std::filesystem::absolute(f->work_dir).string();
  o.trainer_path = f->trainer;
  o.kill_grace = absl::Seconds(f->kill_grace_s);
  return absl::OkStatus();
}

}  // namespace lmtrain
