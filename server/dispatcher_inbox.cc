// Dispatcher, part 4: the inbox of created jobs, so that a submit never waits for mu_, and the
// thread that runs the complete passes questions ask for.
#include <utility>
#include <vector>

#include "server/dispatcher.h"

namespace lmtrain {

void Dispatcher::JobCreated(const JobRecord& job, uint64_t stamp) {
  {
    absl::MutexLock inbox(&inbox_mu_);
    inbox_.push_back({job, stamp});
  }
  if (mu_.TryLock()) {
    DrainInboxLocked();  // This job, and any that waited for mu_.
    mu_.Unlock();
    return;
  }
  // Whoever holds mu_ may hold it for O(queue): the inbox thread takes over.
  absl::MutexLock inbox(&inbox_mu_);
  inbox_wanted_ = true;
}

void Dispatcher::DrainInboxLocked() {
  std::vector<Created> created;
  {
    absl::MutexLock inbox(&inbox_mu_);
    created.swap(inbox_);
  }
  if (created.empty()) return;
  const uint64_t reads = store_reads_.load(std::memory_order_relaxed);
  for (const Created& c : created) {
    if (c.stamp == reads) {
      // No rebuild and no cancel since the stamp: nothing but JobCreated knows the job, so the
      // store still holds it as created (its state only changes through the dispatcher).
      MirrorQueuedLocked(c.job);
    } else {
      QueueFromStoreLocked(c.job.id);
    }
  }
  ScheduleIfDirtyLocked();
}

bool Dispatcher::AwaitWanted(bool* wanted) {
  auto ready = [this, wanted]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_mu_) { return *wanted || inbox_stop_; };
  absl::MutexLock inbox(&inbox_mu_);
  inbox_mu_.Await(absl::Condition(&ready));
  if (inbox_stop_) return false;
  *wanted = false;
  return true;
}

void Dispatcher::InboxLoop() {
  while (AwaitWanted(&inbox_wanted_)) {
    absl::MutexLock lock(&mu_);
    DrainInboxLocked();
  }
}

void Dispatcher::QuestionLoop() {
  while (AwaitWanted(&question_wanted_)) {
    CompletePass(PassFor::kQuestion);  // Plans nothing if another pass ran meanwhile.
  }
}

}  // namespace lmtrain
