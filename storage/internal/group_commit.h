// GroupCommit: concurrent callers share transactions. A caller queues its item; the first
// caller that finds no commit in progress becomes the leader, takes every item queued at that
// moment (at most `max_batch`), runs the commit function on them outside the queue's lock (it
// fills each one's result) and hands the results out; every caller returns only after the
// commit holding its item (or its error). Callers that queued meanwhile form the next batch,
// led by the same leader until its own item is done, then by whoever finds no leader.
//
//   caller --> queued --> [no leader: lead] --> commit batches until ours is done --> result
//                   \--> [a leader runs] --> wait --> done by the leader --> result
//
// Thread-safe. The commit function runs on one thread at a time (the leader's); the queue's
// lock is never held while it runs.
#pragma once

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace lmtrain::storage_internal {

template <typename Item, typename Result>
class GroupCommit {
 public:
  // One queued call: the commit function reads `item` and sets `result`.
  struct Pending {
    const Item* item;
    absl::StatusOr<Result> result = absl::InternalError("not committed");
    bool done = false;
  };
  using CommitFn = std::function<void(const std::vector<Pending*>& batch)>;

  explicit GroupCommit(size_t max_batch) : max_batch_(max_batch) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Queues `item` and returns its result once a commit holding it ran `commit`.
  absl::StatusOr<Result> Run(const Item& item, const CommitFn& commit) {
    Pending me{&item};
    absl::MutexLock lock(&mu_);
    queue_.push_back(&me);
    // Until a leader committed our item, or nobody leads and we take over.
    struct Ready {
      const Pending* me;
      const bool* leader;
      bool operator()() const { return me->done || !*leader; }
    } ready{&me, &leader_};
    mu_.Await(absl::Condition(&ready));
    if (me.done) return std::move(me.result);
    leader_ = true;
    while (!me.done) {  // The queue is FIFO: our item is in this batch or a following one.
      const size_t n = std::min(queue_.size(), max_batch_);
      std::vector<Pending*> batch(queue_.begin(), queue_.begin() + n);
      queue_.erase(queue_.begin(), queue_.begin() + n);
      mu_.Unlock();  // Others queue up for the next batch meanwhile.
      commit(batch);
      mu_.Lock();
      for (Pending* p : batch) p->done = true;
    }
    leader_ = false;
    return std::move(me.result);
  }

 private:
  const size_t max_batch_;
  absl::Mutex mu_;
  std::vector<Pending*> queue_ ABSL_GUARDED_BY(mu_);
  bool leader_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace lmtrain::storage_internal
