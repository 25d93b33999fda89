#include "server/watch_fanout.h"

#include <algorithm>
#include <deque>
#include <utility>

namespace lmtrain {

using EventPtr = std::shared_ptr<const EventRecord>;

struct WatchFanout::Feed {
  explicit Feed(std::string id, int64_t start) : job_id(std::move(id)), floor(start), head(start) {}
  const std::string job_id;
  std::deque<EventPtr> ring;  // Every event with seq in (floor, head], in seq order.
  int64_t floor;
  int64_t head;
  bool read = false;   // Refreshed at least once.
  bool ended = false;  // Terminal, and nothing stored after head when that was seen.
  absl::Status error;  // The last refresh's store error.
  absl::flat_hash_set<Watcher*> watchers;
};

struct WatchFanout::Watcher {
  enum class Turn { kIdle, kSending, kReading, kEnded };
  WatchSink* sink;
  std::shared_ptr<Feed> feed;  // Null for replay_only.
  std::string job_id;
  int64_t cursor;  // The last seq sent (or the request's after_seq).
  Turn turn = Turn::kIdle;
  std::deque<EventPtr> batch;  // Read from the store for this watcher alone.
  bool drained = false;        // The last read of its own found nothing after the cursor.
  bool end_pending = false;    // End with end_status when the turn comes back.
  absl::Status end_status;
};

struct WatchFanout::Action {
  WatchSink* sink;
  EventPtr event;  // Null: End(status).
  absl::Status status;
};

WatchFanout::WatchFanout(JobManager* manager, EventHub* hub, Options options)
    : manager_(manager), hub_(hub), options_(options) {
  listener_ = hub_->AddListener([this](const std::string& key) { OnBump(key); });
  thread_ = std::thread([this] { Loop(); });
  send_thread_ = std::thread([this] { SendLoop(); });
}

WatchFanout::~WatchFanout() { Shutdown(); }

WatchFanout::Watcher* WatchFanout::Watch(const Request& request, WatchSink* sink) {
  auto* w = new Watcher{sink, nullptr, request.job_id, request.after_seq};
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    watchers_.insert(w);
    if (shutdown_) {
      End(*w, absl::UnavailableError("lm-server is shutting down"), &actions);
    } else {
      if (!request.replay_only) {
        std::shared_ptr<Feed>& feed = feeds_[request.job_id];
        if (feed == nullptr) {
          feed = std::make_shared<Feed>(request.job_id, request.after_seq);
          dirty_.insert(request.job_id);
        }
        feed->watchers.insert(w);
        w->feed = feed;
      }
      Advance(*w, &actions);
    }
  }
  Perform(actions);
  return w;
}

void WatchFanout::Sent(Watcher* w, bool ok) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    w->turn = Watcher::Turn::kIdle;
    if (!ok && !w->end_pending) {
      w->end_pending = true;
      w->end_status = absl::CancelledError("the watch stream broke");
    }
    Advance(*w, &actions);
  }
  Perform(actions);
}

void WatchFanout::Cancel(Watcher* w) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (w->turn == Watcher::Turn::kEnded || w->end_pending) return;
    w->end_pending = true;
    w->end_status = absl::CancelledError("the client cancelled the watch");
    if (w->turn == Watcher::Turn::kIdle) Advance(*w, &actions);
  }
  Perform(actions);
}

void WatchFanout::Done(Watcher* w) {
  absl::MutexLock lock(&mu_);
  watchers_.erase(w);
  if (w->feed != nullptr) {
    w->feed->watchers.erase(w);
    auto it = feeds_.find(w->job_id);
    if (w->feed->watchers.empty() && it != feeds_.end() && it->second == w->feed) {
      feeds_.erase(it);
      dirty_.erase(w->job_id);
    }
  }
  delete w;
}

void WatchFanout::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
  }
  hub_->RemoveListener(listener_);
  thread_.join();
  {
    absl::MutexLock lock(&mu_);
    send_stop_ = true;  // It sends what it was handed first: those watchers wait on it.
  }
  send_thread_.join();
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    reads_.clear();
    for (Watcher* w : watchers_) {
      if (w->turn == Watcher::Turn::kEnded) continue;
      w->end_pending = true;
      w->end_status = absl::UnavailableError("lm-server is shutting down");
      if (w->turn == Watcher::Turn::kReading) w->turn = Watcher::Turn::kIdle;
      if (w->turn == Watcher::Turn::kIdle) Advance(*w, &actions);
    }
  }
  Perform(actions);
}

int WatchFanout::watchers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(watchers_.size());
}

void WatchFanout::OnBump(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (feeds_.contains(key)) dirty_.insert(key);
}

void WatchFanout::Loop() {
  mu_.Lock();
  while (!shutdown_) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shutdown_ || !dirty_.empty() || !reads_.empty();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&work), options_.poll)) {
      for (const auto& [id, feed] : feeds_) dirty_.insert(id);  // The periodic re-read.
    }
    if (shutdown_) break;
    std::vector<std::shared_ptr<Feed>> feeds;
    for (const std::string& id : dirty_) feeds.push_back(feeds_.at(id));
    dirty_.clear();
    std::vector<Watcher*> reads;
    reads.swap(reads_);
    mu_.Unlock();
    for (const std::shared_ptr<Feed>& feed : feeds) Refresh(feed);
    for (Watcher* w : reads) ReadFor(w);
    mu_.Lock();
  }
  mu_.Unlock();
}

void WatchFanout::SendLoop() {
  mu_.Lock();
  while (true) {
    auto work = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return send_stop_ || !sends_.empty(); };
    mu_.Await(absl::Condition(&work));
    if (sends_.empty()) break;  // Stopped, and nothing left to send.
    std::vector<Actions> batches;
    batches.swap(sends_);
    mu_.Unlock();
    for (Actions& batch : batches) Perform(batch);
    mu_.Lock();
  }
  mu_.Unlock();
}

void WatchFanout::PerformSplit(Actions& actions) {
  if (static_cast<int>(actions.size()) > options_.split_sends) {
    const auto half = actions.begin() + static_cast<std::ptrdiff_t>(actions.size() / 2);
    Actions theirs(std::make_move_iterator(half), std::make_move_iterator(actions.end()));
    actions.erase(half, actions.end());
    absl::MutexLock lock(&mu_);
    sends_.push_back(std::move(theirs));
  }
  Perform(actions);
}

// One store read past the feed's head; when that reaches the end, whether the job has ended.
// Only this thread changes a feed's ring, so head may be read, then used, unlocked.
void WatchFanout::Refresh(const std::shared_ptr<Feed>& feed) {
  int64_t head;
  {
    absl::MutexLock lock(&mu_);
    head = feed->head;
  }
  absl::StatusOr<std::vector<EventRecord>> events =
      manager_->EventsAfter(feed->job_id, head, options_.batch);
  const bool full = events.ok() && static_cast<int>(events->size()) == options_.batch;
  bool ended = false;
  bool again = full;  // More to read at once.
  absl::Status error = events.status();
  if (events.ok() && !full) {
    absl::StatusOr<JobRecord> job = manager_->Get(feed->job_id);
    error = job.status();
    if (job.ok() && IsTerminal(job->state)) {
      // It may have ended after the read: the end is reached once nothing is stored after.
      const int64_t last = events->empty() ? head : events->back().seq;
      auto rest = manager_->EventsAfter(feed->job_id, last, 1);
      ended = rest.ok() && rest->empty();
      again = !ended;
    }
  }
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_ || feed->watchers.empty()) return;
    feed->error = error;
    if (events.ok()) {
      for (EventRecord& e : *events) {
        feed->head = e.seq;
        feed->ring.push_back(std::make_shared<const EventRecord>(std::move(e)));
      }
      while (static_cast<int>(feed->ring.size()) > options_.ring_events) {
        feed->floor = feed->ring.front()->seq;
        feed->ring.pop_front();
      }
      feed->read = true;
      feed->ended = ended;
    }
    if (again) dirty_.insert(feed->job_id);
    for (Watcher* w : feed->watchers) {
      if (w->turn != Watcher::Turn::kIdle) continue;
      w->drained = false;  // Something may be stored after its cursor now.
      Advance(*w, &actions);
    }
  }
  PerformSplit(actions);
}

// A batch of the store for one watcher (a replay, or one left behind by the ring).
void WatchFanout::ReadFor(Watcher* w) {
  std::string id;
  int64_t cursor;
  {
    absl::MutexLock lock(&mu_);
    id = w->job_id;
    cursor = w->cursor;
  }
  absl::StatusOr<std::vector<EventRecord>> events =
      manager_->EventsAfter(id, cursor, options_.batch);
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;  // Shutdown() ends it.
    w->turn = Watcher::Turn::kIdle;
    if (!events.ok()) {
      End(*w, events.status(), &actions);
    } else {
      w->drained = events->empty();
      for (EventRecord& e : *events) {
        w->batch.push_back(std::make_shared<const EventRecord>(std::move(e)));
      }
      Advance(*w, &actions);
    }
  }
  Perform(actions);
}

void WatchFanout::Advance(Watcher& w, Actions* out) {
  auto send = [&](EventPtr e) {
    w.cursor = e->seq;
    w.turn = Watcher::Turn::kSending;
    out->push_back(Action{w.sink, std::move(e), absl::OkStatus()});
  };
  auto read = [&]() {
    w.turn = Watcher::Turn::kReading;
    reads_.push_back(&w);
  };
  if (w.end_pending) return End(w, w.end_status, out);
  if (!w.batch.empty()) {
    EventPtr e = std::move(w.batch.front());
    w.batch.pop_front();
    return send(std::move(e));
  }
  if (w.feed == nullptr) return w.drained ? End(w, absl::OkStatus(), out) : read();  // Replay.
  const Feed& feed = *w.feed;
  if (!feed.error.ok()) return End(w, feed.error, out);
  if (!feed.read) return;  // The first refresh wakes it.
  if (w.cursor < feed.floor) {
    if (!w.drained) read();  // Else nothing is stored after the cursor yet: wait for a change.
    return;
  }
  auto next = std::upper_bound(feed.ring.begin(), feed.ring.end(), w.cursor,
                               [](int64_t seq, const EventPtr& e) { return seq < e->seq; });
  if (next != feed.ring.end()) return send(*next);
  if (feed.ended) End(w, absl::OkStatus(), out);
}

void WatchFanout::End(Watcher& w, absl::Status status, Actions* out) {
  w.turn = Watcher::Turn::kEnded;
  w.batch.clear();
  out->push_back(Action{w.sink, nullptr, std::move(status)});
}

void WatchFanout::Perform(Actions& actions) {
  for (Action& a : actions) {
    if (a.event != nullptr) {
      a.sink->Send(*a.event);
    } else {
      a.sink->End(a.status);
    }
  }
}

}  // namespace lmtrain
