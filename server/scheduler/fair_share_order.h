// FairShareOrder: the order in which one priority level's queued jobs are considered. The next
// job always comes from the user with the lowest (share in use + share claimed this pass) /
// weight, a job's share being its slots plus SchedulerOptions::gpu_share_weight per GPU; ties go to the user whose head job has the lower seeded hash (then id). A user's own
// jobs come out FIFO. The caller charges each considered job to its user (ClusterState::Start
// or UserTable::Claim) before asking for the next, so users interleave in proportion to their
// weights: with weights 1:3 and equal jobs, three of the second user's jobs per one of the first.
//
// Holds iterators into the level: the level's sets must not change while it is in use (a pass
// removes placed jobs only at its end). Thread-compatible.
#pragma once

#include <queue>
#include <vector>

#include "server/scheduler/job_queue.h"
#include "server/scheduler/user_table.h"

namespace lmtrain::scheduler::internal {

class FairShareOrder {
 public:
  FairShareOrder(const JobQueue::Level& level, const UserTable& users);
  FairShareOrder(const FairShareOrder&) = delete;
  FairShareOrder& operator=(const FairShareOrder&) = delete;

  // The next job, or nullptr once the level is exhausted.
  const QueuedRec* Next();
  // The jobs of the last returned job's user that come after it, in FIFO order.
  UserFifo::const_iterator rest_begin() const { return current_.next; }
  UserFifo::const_iterator rest_end() const { return current_.end; }
  // Drops the rest of the last returned job's user from this level.
  void SkipUser() { current_valid_ = false; }

 private:
  struct Entry {
    double share = 0;  // (share in use + claim) / weight, when pushed.
    const QueuedRec* head = nullptr;
    UserFifo::const_iterator next;
    UserFifo::const_iterator end;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const;
  };
  Entry MakeEntry(UserFifo::const_iterator begin, UserFifo::const_iterator end) const;

  const UserTable& users_;
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  Entry current_;
  bool current_valid_ = false;
};

}  // namespace lmtrain::scheduler::internal
