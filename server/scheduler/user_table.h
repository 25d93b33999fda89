// UserTable: per-user scheduling state — policy (weight, max_running_jobs, max_gpus), fair-share
// use, GPUs in use and running jobs (all counting jobs that are being preempted until they exit)
// — plus the share a user has claimed during the current pass (see FairShareOrder).
//
// Thread-compatible. UserRec addresses are stable for the table's lifetime.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler::internal {

struct UserRec {
  std::string name;
  std::optional<UserPolicy> policy;  // Unset: the table's default.
  double share_in_use = 0;           // Sum of the running jobs' share (QueuedRec::share).
  int64_t gpus_in_use = 0;           // Sum of workers * gpus_per_worker over running jobs.
  int running = 0;                   // Running jobs, preempting ones included.
  double claim = 0;                  // Share of jobs considered this pass but not started.
};

class UserTable {
 public:
  UserTable() = default;
  UserTable(const UserTable&) = delete;
  UserTable& operator=(const UserTable&) = delete;

  void SetDefault(const UserPolicy& policy) { default_ = policy; }
  void Set(const std::string& name, const UserPolicy& policy) { Get(name).policy = policy; }
  // The user's record, created with the default policy on first use.
  UserRec& Get(const std::string& name);

  const UserPolicy& PolicyOf(const UserRec& user) const {
    return user.policy ? *user.policy : default_;
  }
  // Weight used for fair share: the policy's, or a tiny positive one when it is not > 0 (such a
  // user goes last).
  double WeightOf(const UserRec& user) const;
  bool AtRunningLimit(const UserRec& user) const;
  // True when `gpus` more would take the user past its max_gpus.
  bool OverGpuLimit(const UserRec& user, int64_t gpus) const;

  // Records a claim for the current pass; EndPass() clears all of them.
  void Claim(UserRec& user, double share);
  void EndPass();

 private:
  UserPolicy default_;
  std::map<std::string, UserRec> users_;
  std::vector<UserRec*> claimed_;
};

}  // namespace lmtrain::scheduler::internal
