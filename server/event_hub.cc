#include "server/event_hub.h"

namespace lmtrain {

uint64_t EventHub::Version(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = versions_.find(key);
  return it == versions_.end() ? 0 : it->second;
}

void EventHub::Bump(const std::string& key) {
  absl::MutexLock lock(&mu_);
  ++versions_[key];
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
