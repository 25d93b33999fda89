#include "server/scheduler/user_table.h"

namespace lmtrain::scheduler::internal {

UserRec& UserTable::Get(const std::string& name) {
  auto [it, inserted] = users_.try_emplace(name);
  if (inserted) it->second.name = name;
  return it->second;
}

double UserTable::WeightOf(const UserRec& user) const {
  const double weight = PolicyOf(user).weight;
  return weight > 0 ? weight : 1e-9;
}

bool UserTable::AtRunningLimit(const UserRec& user) const {
  const int limit = PolicyOf(user).max_running_jobs;
  return limit > 0 && user.running >= limit;
}

bool UserTable::OverGpuLimit(const UserRec& user, int64_t gpus) const {
  const int limit = PolicyOf(user).max_gpus;
  return limit > 0 && gpus > 0 && user.gpus_in_use + gpus > limit;
}

void UserTable::Claim(UserRec& user, double share) {
  if (user.claim == 0) claimed_.push_back(&user);
  user.claim += share;
}

void UserTable::EndPass() {
  for (UserRec* user : claimed_) user->claim = 0;
  claimed_.clear();
}

}  // namespace lmtrain::scheduler::internal
