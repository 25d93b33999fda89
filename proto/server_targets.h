// ServerTargets: the lm-server replicas a client (lmctl, lm-worker) may talk to, and which one
// it talks to now. Several replicas share one PostgreSQL database; one is active, the others
// stand by and answer UNAVAILABLE with StandbyError's message, which names the active one.
//
//   ServerTargets("a:1,b:1") --> Current() "a:1" --call fails--> Failed("a:1", status)
//     --> Current(): the address the status names, else the next in the list (wrapping)
//
// Thread-safe. A Failed() for a target that is no longer current is ignored, so concurrent
// callers that fail on one target move on once, not once each.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace lmtrain {

// The status a standby lm-server answers calls it does not serve with: Unavailable, naming the
// active server's address ("" when no server holds the lease: "no active lm-server").
absl::Status StandbyError(const std::string& active_address);

// The active server's address a StandbyError message names, if any.
std::optional<std::string> ActiveServerIn(absl::string_view message);

class ServerTargets {
 public:
  // `targets`: "host:port" or "host:port,host:port,..."; empty entries are skipped.
  explicit ServerTargets(absl::string_view targets);
  ServerTargets(const ServerTargets&) = delete;
  ServerTargets& operator=(const ServerTargets&) = delete;

  std::string Current() const;
  size_t size() const { return targets_.size(); }
  // `target` failed with `status`: on UNAVAILABLE, moves to the address a standby named, else
  // to the next target. Other codes change nothing. Returns true when Current() changed.
  bool Failed(const std::string& target, const absl::Status& status);

 private:
  std::vector<std::string> targets_;
  mutable absl::Mutex mu_;
  std::string current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lmtrain
