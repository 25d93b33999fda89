#include "server/scheduler/fair_share_order.h"

namespace lmtrain::scheduler::internal {

bool FairShareOrder::Later::operator()(const Entry& a, const Entry& b) const {
  if (a.share != b.share) return a.share > b.share;
  if (a.head->hash != b.head->hash) return a.head->hash > b.head->hash;
  return a.head->id > b.head->id;
}

FairShareOrder::FairShareOrder(const JobQueue::Level& level, const UserTable& users)
    : users_(users) {
  std::vector<Entry> entries;
  entries.reserve(level.size());
  for (const auto& [name, fifo] : level) {
    if (!fifo.empty()) entries.push_back(MakeEntry(fifo.begin(), fifo.end()));
  }
  heap_ = decltype(heap_)(Later(), std::move(entries));
}

FairShareOrder::Entry FairShareOrder::MakeEntry(UserFifo::const_iterator begin,
                                                UserFifo::const_iterator end) const {
  Entry entry;
  entry.head = *begin;
  const UserRec& user = *entry.head->user;
  entry.share = (user.share_in_use + user.claim) / users_.WeightOf(user);
  entry.next = begin;
  entry.end = end;
  return entry;
}

const QueuedRec* FairShareOrder::Next() {
  // The previous job's user goes back in with its usage as charged since.
  if (current_valid_ && current_.next != current_.end) {
    heap_.push(MakeEntry(current_.next, current_.end));
  }
  current_valid_ = false;
  if (heap_.empty()) return nullptr;
  current_ = heap_.top();
  heap_.pop();
  current_valid_ = true;
  const QueuedRec* job = *current_.next;
  ++current_.next;
  return job;
}

}  // namespace lmtrain::scheduler::internal
