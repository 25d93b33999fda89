#include "proto/server_targets.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace lmtrain {
namespace {

constexpr absl::string_view kActiveMarker = "active lm-server: ";

}  // namespace

absl::Status StandbyError(const std::string& active_address) {
  if (active_address.empty()) {
    return absl::UnavailableError(
        "this lm-server is a standby and no active lm-server holds the lease yet; retry");
  }
  return absl::UnavailableError(
      absl::StrCat("this lm-server is a standby; ", kActiveMarker, active_address));
}

std::optional<std::string> ActiveServerIn(absl::string_view message) {
  const size_t at = message.find(kActiveMarker);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = message.substr(at + kActiveMarker.size());
  rest = rest.substr(0, rest.find_first_of(" )\n"));
  if (rest.empty()) return std::nullopt;
  return std::string(rest);
}

ServerTargets::ServerTargets(absl::string_view targets) {
  for (absl::string_view t : absl::StrSplit(targets, ',', absl::SkipWhitespace())) {
    targets_.emplace_back(absl::StripAsciiWhitespace(t));
  }
  if (targets_.empty()) targets_.emplace_back(targets);
  current_ = targets_.front();
}

std::string ServerTargets::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

bool ServerTargets::Failed(const std::string& target, const absl::Status& status) {
  if (status.code() != absl::StatusCode::kUnavailable) return false;
  absl::MutexLock lock(&mu_);
  if (target != current_) return false;
  if (std::optional<std::string> active = ActiveServerIn(status.message())) {
    if (*active != current_) {
      current_ = *active;
      return true;
    }
  }
  // The next in the list; from outside it (a named address), the first.
  auto it = std::find(targets_.begin(), targets_.end(), current_);
  const size_t i = it == targets_.end() ? targets_.size() - 1 : it - targets_.begin();
  const std::string& next = targets_[(i + 1) % targets_.size()];
  if (next == current_) return false;
  current_ = next;
  return true;
}

}  // namespace lmtrain
