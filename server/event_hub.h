// EventHub: wakes WatchJob streams and long-polling workers when something they wait on
// changes. It carries no data, only a version per key; waiters follow this pattern, which
// cannot miss a wake-up:
//   uint64_t v = hub.Version(key);   // 1. snapshot
//   ... read the store ...           // 2. nothing new?
//   hub.WaitForChange(key, v, t);    // 3. sleep until Bump(key) after the snapshot
// Keys: a job id for its event log; kWorkKey for "jobs to dispatch or cancel".
//
// Listeners (AddListener) are told of every Bump instead of waiting on it: WatchFanout
// (server/watch_fanout.h) follows every watched job through one listener and no thread per
// watcher. A listener runs on the thread that bumps, after the version changed, so it must be
// quick and must not call back into the hub.
//
// Thread-safe. Bump never blocks for long; WaitForChange blocks the calling thread until
// the version differs from `seen`, the timeout passes, or Shutdown().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace lmtrain {

class EventHub {
 public:
  static constexpr char kWorkKey[] = "";

  EventHub() = default;
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  uint64_t Version(const std::string& key);
  void Bump(const std::string& key);
  // True when the version changed; false on timeout or shutdown.
  bool WaitForChange(const std::string& key, uint64_t seen, absl::Duration timeout);
  // Wakes every waiter; later waits return false at once.
  void Shutdown();

  // Calls `listener(key)` after every Bump(key) until RemoveListener(id), which waits for a
  // call in progress to return. Returns the id.
  using Listener = std::function<void(const std::string& key)>;
  int AddListener(Listener listener);
  void RemoveListener(int id);

 private:
  absl::Mutex mu_;
  // Its own lock, held while listeners run, so that they never run under mu_.
  absl::Mutex listeners_mu_;
  std::vector<std::pair<int, Listener>> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  int next_listener_ ABSL_GUARDED_BY(listeners_mu_) = 0;
  absl::flat_hash_map<std::string, uint64_t> versions_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace lmtrain
