// WatchFanout: streams jobs' event logs to many concurrent watchers (lm-server's WatchJob)
// with no thread per watcher: one fanout thread reads the store, and each watcher is a sink
// (the gRPC reactor in server/watch_reactor.h) that sends one event at a time.
//
// Feeds. Every watched job has one feed: a ring of its newest events, every event with seq in
// (floor, head], at most Options::ring_events (older ones fall off and raise the floor). When
// the job's EventHub key is bumped (and every Options::poll, for events stored without a bump
// in this process, e.g. by another replica on a shared store), the fanout thread reads what is
// new once, appends it to the ring, and hands each waiting watcher its next event.
//
// Watchers. A watcher sends the events after its cursor (the request's after_seq, then the last
// seq it sent) in seq order, each exactly once: from the ring when its cursor >= the floor, else
// from its own batch of at most Options::batch events that the fanout thread reads from the
// store for it. So a replay from an old after_seq, and a reader too slow for the ring, re-read
// from the store; a slow watcher holds at most one batch and never ends for being slow. Events
// stored while a replay runs come from the store or the ring, never twice, never skipped.
//
// Ends. OK once the job is terminal and the watcher has sent what was stored when it was seen
// terminal (events stored later still come while the stream is open); with replay_only, OK
// once a read of the store finds nothing more. A store error ends it with that error;
// Cancel() (the client went away) with CANCELLED; Shutdown() with UNAVAILABLE (lmctl then
// retries, or fails over to another replica).
//
// A watcher hands the turn back and forth with its sink; at most one sink call is outstanding,
// End comes exactly once and nothing after it, and no sink call is made under the fanout's lock:
//
//   Watch() ──▶ idle ──event──▶ sink.Send(e) ──▶ sending ──Sent(ok)──▶ idle ...
//                │                                         (!ok: as Cancel)
//                └──end / Cancel() / Shutdown()──▶ sink.End(status) ──▶ ended ──Done()──▶ freed
//
// Thread-safe. Sink calls run on the fanout thread, its send thread (which takes half of a
// large fan-out), or the thread that calls Watch, Sent, Cancel or Shutdown. The fanout must outlive
// its watchers' Done(); the destructor shuts down.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/event_hub.h"
#include "server/job_manager.h"

namespace lmtrain {

// One watcher's outlet. Implementations forward to a stream; both calls must return quickly.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // Start sending `event`; answer with WatchFanout::Sent once it is sent (or failed).
  virtual void Send(const EventRecord& event) = 0;
  // End the stream with `status`; WatchFanout::Done follows once the stream is gone.
  virtual void End(const absl::Status& status) = 0;
};

class WatchFanout {
 public:
  struct Options {
    int ring_events = 1024;                  // Newest events kept per watched job.
    int batch = 500;                         // Events one store read returns.
    absl::Duration poll = absl::Seconds(1);  // Re-read every watched job this often.
    // A new event for more than this many watchers is sent by two threads, half each.
    int split_sends = 64;
  };
  struct Request {
    std::string job_id;
    int64_t after_seq = 0;
    bool replay_only = false;
  };
  struct Watcher;  // Opaque handle.

  // Neither is owned; both must outlive the fanout. Starts the fanout thread.
  WatchFanout(JobManager* manager, EventHub* hub, Options options);
  WatchFanout(JobManager* manager, EventHub* hub) : WatchFanout(manager, hub, Options()) {}
  ~WatchFanout();
  WatchFanout(const WatchFanout&) = delete;
  WatchFanout& operator=(const WatchFanout&) = delete;

  // Starts a watch that `sink` (not owned; alive until Done) streams. The caller has checked
  // access to the job. May call sink.Send or sink.End before it returns.
  Watcher* Watch(const Request& request, WatchSink* sink);
  // The sink's Send finished; ok false: the stream is broken (the watch ends CANCELLED).
  void Sent(Watcher* watcher, bool ok);
  // The client went away: ends the watch CANCELLED (now, or when its Send or read returns).
  void Cancel(Watcher* watcher);
  // The stream is gone (after End): frees the watcher. The handle is invalid afterwards.
  void Done(Watcher* watcher);
  // Stops the thread and ends every watch UNAVAILABLE, and any later one at once. Idempotent.
  void Shutdown();

  int watchers() const;  // Watches started and not yet Done.

 private:
  struct Feed;
  struct Action;
  using Actions = std::vector<Action>;

  void Loop();
  void SendLoop();
  // Performs `actions`, handing half to the send thread when they are many.
  void PerformSplit(Actions& actions);
  void Refresh(const std::shared_ptr<Feed>& feed);
  void ReadFor(Watcher* watcher);
  void OnBump(const std::string& key);
  // Decides the watcher's next step (it must hold the turn: idle); what to call on its sink.
  void Advance(Watcher& w, Actions* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void End(Watcher& w, absl::Status status, Actions* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Perform(Actions& actions);

  JobManager* const manager_;
  EventHub* const hub_;
  const Options options_;
  mutable absl::Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, std::shared_ptr<Feed>> feeds_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);  // Feeds to re-read.
  std::vector<Watcher*> reads_ ABSL_GUARDED_BY(mu_);             // Watchers awaiting a batch.
  absl::flat_hash_set<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
  std::vector<Actions> sends_ ABSL_GUARDED_BY(mu_);  // For the send thread.
  bool send_stop_ ABSL_GUARDED_BY(mu_) = false;
  int listener_ = -1;
  std::thread thread_;
  std::thread send_thread_;
};

}  // namespace lmtrain
