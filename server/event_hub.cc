#include "server/event_hub.h"

#include <algorithm>

namespace lmtrain {

uint64_t EventHub::Version(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = versions_.find(key);
  return it == versions_.end() ? 0 : it->second;
}

void EventHub::Bump(const std::string& key) {
  {
    absl::MutexLock lock(&mu_);
    ++versions_[key];
  }
  absl::MutexLock lock(&listeners_mu_);
  for (const auto& [id, listener] : listeners_) listener(key);
}

int EventHub::AddListener(Listener listener) {
  absl::MutexLock lock(&listeners_mu_);
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void EventHub::RemoveListener(int id) {
  absl::MutexLock lock(&listeners_mu_);
  listeners_.erase(std::remove_if(listeners_.begin(), listeners_.end(),
                                  [id](const auto& entry) { return entry.first == id; }),
                   listeners_.end());
}

bool EventHub::WaitForChange(const std::string& key, uint64_t seen, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() {
    auto it = versions_.find(key);
    return (it == versions_.end() ? 0 : it->second) != seen;
  };
  auto ready = [&]() { return shutdown_ || changed(); };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return !shutdown_ && changed();
}

void EventHub::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

}  // namespace lmtrain
