// WorkerRegistry: the workers lm-server knows — what each registered with, when it was last
// seen (its lease), the rendezvous ports and stale GPUs it holds — and the Sync long-polls
// parked on them.
//
// Waiting Syncs: each worker has its own wake-up. Wake(id) releases exactly the Syncs parked on
// that worker (WaitForWake), not every long-poll of the server; WakeAll and Shutdown release
// them all. A wake-up carries no data: the woken Sync reads its work from the Dispatcher again.
//
// Lifecycle of one worker:
//
//   Add ──► registered ──(Touch on each Sync)──► registered ──Remove──► gone
//                 │                                                 ▲
//                 └──── Expired(now, lease) lists it ───────────────┘ (the Dispatcher removes it)
//
// Thread-compatible: not locked itself. The Dispatcher's mutex guards it, and WaitForWake
// releases that mutex while it waits (a CondVar per worker).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/device_info.h"

namespace lmtrain {

struct WorkerInfo {
  std::string name;
  std::string hostname;
  int slots = 1;
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> labels;
  std::string advertise_address;  // Empty: hostname.
  int rendezvous_port_base = 29500;
  int rendezvous_port_count = 100;
};

// The indices of a worker's cuda devices, in the order it listed them.
std::vector<int> CudaIndices(const WorkerInfo& info);

class WorkerRegistry {
 public:
  struct Worker {
    WorkerInfo info;  // advertise_address filled in (hostname when the worker gave none).
    int64_t last_seen_ms = 0;
    std::set<int> ports_in_use;  // Rendezvous ports of attempts whose rank 0 runs here.
    std::set<int> stale_gpus;    // Held by ranks it still runs that are being stopped.
  };

  WorkerRegistry() = default;
  WorkerRegistry(const WorkerRegistry&) = delete;
  WorkerRegistry& operator=(const WorkerRegistry&) = delete;

  // Registers a worker seen at now_ms; returns its new id, unique across server restarts.
  std::string Add(const WorkerInfo& info, int64_t now_ms);
  // nullptr when unknown.
  Worker* Find(const std::string& id);
  const Worker* Find(const std::string& id) const;
  bool Contains(const std::string& id) const { return workers_.contains(id); }
  // Forgets a worker and wakes its parked Syncs (they find it unknown). No-op when unknown.
  void Remove(const std::string& id);
  // Workers not seen for longer than lease_ms, sorted.
  std::vector<std::string> Expired(int64_t now_ms, int64_t lease_ms) const;
  const absl::flat_hash_map<std::string, Worker>& workers() const { return workers_; }

  // A free rendezvous port of the worker's range, now in use; nullopt when all are taken or the
  // worker is unknown. ReleasePort gives one back (no-op when unknown).
  std::optional<int> TakePort(const std::string& id);
  void ReleasePort(const std::string& id, int port);

  // Releases the Syncs parked on worker `id` (none parked: the next one is not affected).
  void Wake(const std::string& id);
  // Parks the caller until Wake(id), Remove(id), `deadline` or Shutdown. `mu` guards this
  // registry and is held; it is released while waiting and held again on return. True when woken
  // by Wake or Remove; false on deadline or shutdown.
  bool WaitForWake(absl::Mutex* mu, const std::string& id, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Syncs parked now, over all workers.
  int parked() const { return parked_; }
  // Releases every parked Sync; later waits return false at once.
  void Shutdown();
  bool shut_down() const { return shutdown_; }

 private:
  // One per worker id; shared with its parked Syncs so that Remove cannot pull it from under
  // them.
  struct WakeUp {
    uint64_t count = 0;
    absl::CondVar cv;
  };
  std::shared_ptr<WakeUp> WakeUpOf(const std::string& id);

  uint64_t next_id_ = 1;
  absl::flat_hash_map<std::string, Worker> workers_;
  absl::flat_hash_map<std::string, std::shared_ptr<WakeUp>> wake_ups_;  // Only while parked.
  int parked_ = 0;
  bool shutdown_ = false;
};

}  // namespace lmtrain
