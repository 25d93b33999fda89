// EventHub: tells listeners that something keyed changed. It carries no data, only the key;
// a listener reads the store itself. Keys: a job id for its event log; kWorkKey for "jobs to
// dispatch or cancel".
//
// WatchFanout (server/watch_fanout.h) follows every watched job through one listener and no
// thread per watcher. A listener runs on the thread that bumps, so it must be quick and must
// not call back into the hub.
//
// Thread-safe. Bump never blocks for long (only behind a listener's call in progress).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace lmtrain {

class EventHub {
 public:
  static constexpr char kWorkKey[] = "";

  EventHub() = default;
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // Calls every listener with `key`.
  void Bump(const std::string& key);

  // Calls `listener(key)` after every Bump(key) until RemoveListener(id), which waits for a
  // call in progress to return. Returns the id.
  using Listener = std::function<void(const std::string& key)>;
  int AddListener(Listener listener);
  void RemoveListener(int id);

 private:
  absl::Mutex mu_;  // Held while listeners run.
  std::vector<std::pair<int, Listener>> listeners_ ABSL_GUARDED_BY(mu_);
  int next_listener_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lmtrain
