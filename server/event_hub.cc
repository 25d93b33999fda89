#include "server/event_hub.h"

#include <algorithm>

namespace lmtrain {

void EventHub::Bump(const std::string& key) {
  absl::MutexLock lock(&mu_);
  for (const auto& [id, listener] : listeners_) listener(key);
}

int EventHub::AddListener(Listener listener) {
  absl::MutexLock lock(&mu_);
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void EventHub::RemoveListener(int id) {
  absl::MutexLock lock(&mu_);
  listeners_.erase(std::remove_if(listeners_.begin(), listeners_.end(),
                                  [id](const auto& entry) { return entry.first == id; }),
                   listeners_.end());
}

}  // namespace lmtrain
