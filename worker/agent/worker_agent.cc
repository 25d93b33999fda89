#include "worker/agent/worker_agent.h"

#include <unistd.h>

#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/model_estimate.h"

namespace lmtrain {
namespace {

std::string RunnerKey(const std::string& job_id, int rank, int attempt) {
  return absl::StrCat(job_id, "/", rank, "/", attempt);
}

}  // namespace

WorkerAgent::WorkerAgent(ServerClient* client, ProcessLauncher* launcher, GpuInventory* gpus,
                         Options options)
    : client_(client), launcher_(launcher), gpus_(gpus), options_(std::move(options)) {}

std::string WorkerAgent::worker_id() const {
  absl::MutexLock lock(&id_mu_);
  return worker_id_;
}

WorkerRegistration WorkerAgent::Registration() {
  WorkerRegistration reg;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  reg.hostname = host;
  reg.name = options_.name.empty() ? host : options_.name;
  reg.slots = options_.slots;
  reg.labels = options_.labels;
  reg.advertise_address = options_.advertise_address.empty() ? host : options_.advertise_address;
  reg.rendezvous_port_base = options_.rendezvous_port_base;
  reg.rendezvous_port_count = options_.rendezvous_port_count;
  reg.devices.push_back({"cpu", 0, absl::StrCat(std::thread::hardware_concurrency(), " cores"),
                         static_cast<int64_t>(PhysicalMemoryBytes()), ""});
  absl::StatusOr<std::vector<GpuDevice>> gpus = gpus_->List();
  if (!gpus.ok() && !gpu_reason_shown_) {
    std::cerr << "lm-worker: no GPUs: " << gpus.status().message() << std::endl;
    gpu_reason_shown_ = true;
  }
  for (const GpuDevice& gpu : gpus.value_or(std::vector<GpuDevice>{})) {
    reg.devices.push_back({"cuda", gpu.index, gpu.name, gpu.memory_bytes, gpu.uuid});
  }
  reg.running = Running();
  return reg;
}

bool WorkerAgent::Register() {
  const WorkerRegistration reg = Registration();
  absl::StatusOr<std::string> id = client_->Register(reg);
  if (!id.ok()) {
    const absl::StatusCode code = id.status().code();
    if ((code == absl::StatusCode::kUnauthenticated ||
         code == absl::StatusCode::kPermissionDenied) && !refused_shown_) {
      std::cerr << "lm-worker: the server refused to register this worker ("
                << id.status().message() << "); check --token / LMTRAIN_WORKER_TOKEN" << std::endl;
      refused_shown_ = true;
    }
    return false;
  }
  std::cerr << "lm-worker: registered as " << *id << " with " << reg.devices.size() - 1
            << " GPU(s) (" << reg.running.size() << " running rank(s) reported)" << std::endl;
  absl::MutexLock lock(&id_mu_);
  worker_id_ = *std::move(id);
  return true;
}

void WorkerAgent::Reap() {
  for (auto it = runners_.begin(); it != runners_.end();) {
    it = it->second->done() ? runners_.erase(it) : std::next(it);
  }
}

std::vector<RunningRank> WorkerAgent::Running() const {
  std::vector<RunningRank> out;
  for (const auto& [key, runner] : runners_) {
    if (runner->done()) continue;
    const RankAssignment& a = runner->assignment();
    out.push_back({a.job_id, a.rank, a.attempt, a.gpus});
  }
  return out;
}

void WorkerAgent::Apply(const SyncOrders& orders) {
  for (const RunningRank& r : orders.stop) {
    auto it = runners_.find(RunnerKey(r.job_id, r.rank, r.attempt));
    if (it != runners_.end()) it->second->Cancel();
  }
  for (const RankAssignment& a : orders.assignments) {
    const std::string key = RunnerKey(a.job_id, a.rank, a.attempt);
    if (!started_.insert(key).second) continue;  // Re-sent until acknowledged.
    JobRunner::Options o{options_.trainer_path, options_.work_dir, options_.kill_grace};
    o.artifacts = options_.artifacts;
    auto runner = std::make_unique<JobRunner>(
        a, [this] { return worker_id(); }, client_, launcher_, o);
    runner->Start();
    runners_.emplace(key, std::move(runner));
  }
}

void WorkerAgent::Run() {
  absl::Duration backoff = options_.retry_backoff;
  auto wait = [&] {
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.retry_backoff_max);
  };
  bool unreachable = false;
  while (!stop_.load()) {
    Reap();
    if (worker_id().empty() && !Register()) {
      wait();
      continue;
    }
    WorkerSync sync;
    sync.worker_id = worker_id();
    sync.running = Running();
    sync.free_slots = options_.slots - static_cast<int>(sync.running.size());
    sync.wait_ms = options_.sync_wait_ms;
    absl::StatusOr<SyncOrders> orders = client_->Sync(sync);
    if (!orders.ok()) {
      if (!unreachable) {
        std::cerr << "lm-worker: server unreachable (" << orders.status().message()
                  << "); retrying, running ranks keep running" << std::endl;
      }
      unreachable = true;
      wait();
      continue;
    }
    unreachable = false;
    backoff = options_.retry_backoff;
    if (orders->reregister) {
      std::cerr << "lm-worker: the server does not know " << sync.worker_id << "; registering again"
                << std::endl;
      absl::MutexLock lock(&id_mu_);
      worker_id_.clear();
      continue;
    }
    Apply(*orders);
  }
  for (auto& [id, runner] : runners_) runner->Shutdown();
  runners_.clear();  // Joins each runner after its child is gone.
}

}  // namespace lmtrain
