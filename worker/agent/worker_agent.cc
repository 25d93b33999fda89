#include "worker/agent/worker_agent.h"

#include <unistd.h>

#include <filesystem>
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

bool WorkerAgent::Register() {
  v1::RegisterWorkerRequest req;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  req.set_hostname(host);
  req.set_name(options_.name.empty() ? host : options_.name);
  req.set_slots(options_.slots);
  req.mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
  req.set_advertise_address(options_.advertise_address.empty() ? host : options_.advertise_address);
  req.set_rendezvous_port_base(options_.rendezvous_port_base);
  req.set_rendezvous_port_count(options_.rendezvous_port_count);
  v1::Device* cpu = req.add_devices();
  cpu->set_type("cpu");
  cpu->set_name(absl::StrCat(std::thread::hardware_concurrency(), " cores"));
  cpu->set_memory_bytes(static_cast<int64_t>(PhysicalMemoryBytes()));
  absl::StatusOr<std::vector<GpuDevice>> gpus = gpus_->List();
  if (!gpus.ok() && !gpu_reason_shown_) {
    std::cerr << "lm-worker: no GPUs: " << gpus.status().message() << std::endl;
    gpu_reason_shown_ = true;
  }
  for (const GpuDevice& gpu : gpus.value_or(std::vector<GpuDevice>{})) {
    v1::Device* d = req.add_devices();
    d->set_type("cuda");
    d->set_index(gpu.index);
    d->set_name(gpu.name);
    d->set_memory_bytes(gpu.memory_bytes);
    d->set_uuid(gpu.uuid);
  }
  AddRunning(req.mutable_running());
  auto resp = client_->Register(req);
  if (!resp.ok()) {
    const absl::StatusCode code = resp.status().code();
    if ((code == absl::StatusCode::kUnauthenticated ||
         code == absl::StatusCode::kPermissionDenied) && !refused_shown_) {
      std::cerr << "lm-worker: the server refused to register this worker ("
                << resp.status().message() << "); check --token / LMTRAIN_WORKER_TOKEN"
                << std::endl;
      refused_shown_ = true;
    }
    return false;
  }
  std::cerr << "lm-worker: registered as " << resp->worker_id() << " with "
            << req.devices_size() - 1 << " GPU(s) (" << req.running_size()
            << " running rank(s) reported)" << std::endl;
  absl::MutexLock lock(&id_mu_);
  worker_id_ = resp->worker_id();
  return true;
}

void WorkerAgent::Reap() {
  for (auto it = runners_.begin(); it != runners_.end();) {
    it = it->second->done() ? runners_.erase(it) : std::next(it);
  }
}

void WorkerAgent::AddRunning(google::protobuf::RepeatedPtrField<v1::RunningRank>* out) const {
  for (const auto& [key, runner] : runners_) {
    if (runner->done()) continue;
    v1::RunningRank* r = out->Add();
    r->set_job_id(runner->job_id());
    r->set_rank(runner->assignment().rank());
    r->set_attempt(runner->assignment().attempt());
    r->mutable_gpus()->CopyFrom(runner->assignment().gpus());
  }
}

void WorkerAgent::Apply(const v1::SyncResponse& resp) {
  for (const v1::RunningRank& r : resp.stop()) {
    auto it = runners_.find(RunnerKey(r.job_id(), r.rank(), r.attempt()));
    if (it != runners_.end()) it->second->Cancel();
  }
  for (const std::string& id : resp.cancel_job_ids()) {  // From servers without `stop`.
    for (auto& [key, runner] : runners_) {
      if (runner->job_id() == id) runner->Cancel();
    }
  }
  for (const v1::Assignment& a : resp.assignments()) {
    const std::string key = RunnerKey(a.job_id(), a.rank(), a.attempt());
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
  absl::Duration backoff = absl::Milliseconds(100);
  auto wait = [&] {
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  };
  bool unreachable = false;
  while (!stop_.load()) {
    Reap();
    if (worker_id().empty() && !Register()) {
      wait();
      continue;
    }
    v1::SyncRequest req;
    req.set_worker_id(worker_id());
    AddRunning(req.mutable_running());
    req.set_free_slots(options_.slots - req.running_size());
    req.set_wait_ms(options_.sync_wait_ms);
    auto resp = client_->Sync(req);
    if (!resp.ok()) {
      if (!unreachable) {
        std::cerr << "lm-worker: server unreachable (" << resp.status().message()
                  << "); retrying, running ranks keep running" << std::endl;
      }
      unreachable = true;
      wait();
      continue;
    }
    unreachable = false;
    backoff = absl::Milliseconds(100);
    if (resp->reregister()) {
      std::cerr << "lm-worker: the server does not know " << req.worker_id()
                << "; registering again" << std::endl;
      absl::MutexLock lock(&id_mu_);
      worker_id_.clear();
      continue;
    }
    Apply(*resp);
  }
  for (auto& [id, runner] : runners_) runner->Shutdown();
  runners_.clear();  // Joins each runner after its child is gone.
}

std::string DefaultTrainerPath() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "lm-train";
  return (self.parent_path() / "lm-train").string();
}

}  // namespace lmtrain
