#include "server/worker_registry.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_format.h"

namespace lmtrain {
namespace {

// Worker ids must not repeat across server restarts (a worker keeps its old id until told
// to re-register), so they carry a random part.
std::string NewWorkerId(uint64_t counter) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("w%d-%08x", counter, static_cast<uint32_t>(rng()));
}

}  // namespace

std::vector<int> CudaIndices(const WorkerInfo& info) {
  std::vector<int> indices;
  for (const DeviceInfo& d : info.devices) {
    if (d.type == "cuda") indices.push_back(d.index);
  }
  return indices;
}

std::string WorkerRegistry::Add(const WorkerInfo& info, int64_t now_ms) {
  std::string id = NewWorkerId(next_id_++);
  Worker& w = workers_[id];
  w.info = info;
  if (w.info.advertise_address.empty()) w.info.advertise_address = info.hostname;
  w.last_seen_ms = now_ms;
  return id;
}

WorkerRegistry::Worker* WorkerRegistry::Find(const std::string& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

const WorkerRegistry::Worker* WorkerRegistry::Find(const std::string& id) const {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

void WorkerRegistry::Remove(const std::string& id) {
  if (workers_.erase(id) > 0) Wake(id);
}

std::vector<std::string> WorkerRegistry::Expired(int64_t now_ms, int64_t lease_ms) const {
  std::vector<std::string> dead;
  for (const auto& [id, w] : workers_) {
    if (now_ms - w.last_seen_ms > lease_ms) dead.push_back(id);
  }
  std::sort(dead.begin(), dead.end());
  return dead;
}

std::optional<int> WorkerRegistry::TakePort(const std::string& id) {
  Worker* w = Find(id);
  if (w == nullptr) return std::nullopt;
  for (int i = 0; i < w->info.rendezvous_port_count; ++i) {
    const int port = w->info.rendezvous_port_base + i;
    if (w->ports_in_use.insert(port).second) return port;
  }
  return std::nullopt;
}

void WorkerRegistry::ReleasePort(const std::string& id, int port) {
  if (Worker* w = Find(id); w != nullptr) w->ports_in_use.erase(port);
}

std::shared_ptr<WorkerRegistry::WakeUp> WorkerRegistry::WakeUpOf(const std::string& id) {
  std::shared_ptr<WakeUp>& slot = wake_ups_[id];
  if (slot == nullptr) slot = std::make_shared<WakeUp>();
  return slot;
}

void WorkerRegistry::Wake(const std::string& id) {
  auto it = wake_ups_.find(id);
  if (it == wake_ups_.end()) return;  // Nobody parked: the next Sync reads the work anyway.
  ++it->second->count;
  it->second->cv.SignalAll();
}

bool WorkerRegistry::WaitForWake(absl::Mutex* mu, const std::string& id, absl::Time deadline) {
  if (shutdown_) return false;
  std::shared_ptr<WakeUp> wake = WakeUpOf(id);
  const uint64_t seen = wake->count;
  ++parked_;
  bool timed_out = false;
  while (wake->count == seen && !shutdown_ && !timed_out) {
    timed_out = wake->cv.WaitWithDeadline(mu, deadline);
  }
  --parked_;
  // The last one out drops the entry: a worker that never parks again costs nothing.
  if (wake.use_count() == 2) {
    auto it = wake_ups_.find(id);
    if (it != wake_ups_.end() && it->second == wake) wake_ups_.erase(it);
  }
  return wake->count != seen && !shutdown_;
}

void WorkerRegistry::Shutdown() {
  shutdown_ = true;
  for (auto& [id, wake] : wake_ups_) wake->cv.SignalAll();
}

}  // namespace lmtrain
