// Dispatcher, event paths: each event (submit, finish, cancel, worker loss, lease expiry) is
// scheduled when it happens and its work is pushed into the chosen worker's parked SyncWait,
// with no other Sync. Real threads park in SyncWait; the tests wait on the dispatcher's own
// count of parked Syncs, never on a sleep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "server/dispatcher.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kLeaseMs;

// Long enough that a test which relied on the deadline instead of a wake-up fails its checks
// (an empty result), short enough not to hang the suite when it does.
constexpr absl::Duration kParkFor = absl::Seconds(20);

// One SyncWait on its own thread; Get() joins it and returns what it returned.
class ParkedSync {
 public:
  ParkedSync(Dispatcher* d, std::string worker, std::vector<RankRef> running)
      : thread_([this, d, worker = std::move(worker), running = std::move(running)] {
          result_ = d->SyncWait(worker, running, kParkFor);
          done_.Notify();
        }) {}
  ~ParkedSync() {
    if (thread_.joinable()) thread_.join();
  }
  SyncResult Get() {
    thread_.join();
    EXPECT_TRUE(result_.ok()) << result_.status();
    return result_.value_or(SyncResult{});
  }
  bool done() const { return done_.HasBeenNotified(); }

 private:
  absl::StatusOr<SyncResult> result_;
  absl::Notification done_;
  std::thread thread_;
};

class DispatcherEventsTest : public testing::DispatcherFixture {
 protected:
  // Waits until `n` SyncWait calls are parked (each re-checks its work under the dispatcher's
  // lock before parking, so an event after this point must wake it to reach it).
  void WaitParked(int n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (dispatcher_->ParkedSyncs() != n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_EQ(dispatcher_->ParkedSyncs(), n);
  }
  // Waits until `n` complete passes ran (a question starts one on the dispatcher's own thread
  // when the job it asks about has a reason already).
  void WaitForCompletePasses(int64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (dispatcher_->CompletePasses() < n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_EQ(dispatcher_->CompletePasses(), n);
  }
  // A new dispatcher with `options` over a scheduler whose event passes examine one queued job
  // each, so that complete passes have work left that the event passes did not reach.
  void UseBoundedScheduler(Dispatcher::Options options) {
    manager_.reset();
    dispatcher_.reset();  // Before the scheduler it points to.
    scheduler::SchedulerOptions bounded;
    bounded.max_jobs_examined = 1;
    scheduler_ = scheduler::MakePolicyScheduler(bounded);
    UseOptions(std::move(options));
  }
  static std::vector<std::string> JobsOf(const SyncResult& r) {
    std::vector<std::string> out;
    for (const JobAssignment& a : r.assignments) out.push_back(a.job_id);
    return out;
  }
};

TEST_F(DispatcherEventsTest, SubmitWakesOnlyTheChosenWorkersParkedSync) {
  const std::string gpu = Worker("gpu", 1, {{"kind", "big"}});
  const std::string other = Worker("other", 1, {{"kind", "small"}});
  ParkedSync chosen(dispatcher_.get(), gpu, {});
  ParkedSync idle(dispatcher_.get(), other, {});
  WaitParked(2);
  const std::string id = Submit("a", 0, "selector: {kind: big}");
  EXPECT_EQ(State(id), JobState::kScheduled);  // Placed by the submit itself.
  EXPECT_THAT(JobsOf(chosen.Get()), ElementsAre(id));
  EXPECT_FALSE(idle.done());  // The other worker's long-poll was not woken.
  EXPECT_EQ(dispatcher_->ParkedSyncs(), 1);
  dispatcher_->Shutdown();
  EXPECT_TRUE(idle.Get().empty());
}

TEST_F(DispatcherEventsTest, FinishPlacesTheNextQueuedJobOnTheFreedWorker) {
  const std::string w = Worker("w", 1);
  const std::string a = Submit("a");
  const std::string b = Submit("b");
  const JobAssignment first = Sync(w).assignments.at(0);
  ASSERT_EQ(first.job_id, a);
  Start(w, first);
  EXPECT_EQ(State(b), JobState::kQueued);
  ParkedSync parked(dispatcher_.get(), w, {Ref(first)});
  WaitParked(1);
  ASSERT_TRUE(Exit(w, first, 0).ok());
  EXPECT_EQ(State(a), JobState::kSucceeded);
  const SyncResult next = parked.Get();
  EXPECT_THAT(JobsOf(next), ElementsAre(b));
  EXPECT_EQ(State(b), JobState::kScheduled);
  EXPECT_EQ(Job(b).worker_id, w);
}

TEST_F(DispatcherEventsTest, CancelPushesTheStopIntoTheParkedSync) {
  const std::string w = Worker("w", 1);
  const std::string id = Submit("a");
  const JobAssignment first = Sync(w).assignments.at(0);
  Start(w, first);
  ParkedSync parked(dispatcher_.get(), w, {Ref(first)});
  WaitParked(1);
  ASSERT_TRUE(manager_->Cancel(id, "").ok());
  EXPECT_THAT(Stops(parked.Get()), ElementsAre(id + "/0/1"));
  ASSERT_TRUE(Exit(w, first, -1, /*cancelled=*/true, 15).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
}

// Lease expiry: the silent worker's job is requeued and pushed to the other worker's parked
// Sync by the expiry pass alone.
TEST_F(DispatcherEventsTest, LeaseExpiryRequeuesOntoTheParkedWorker) {
  const std::string w1 = Worker("w1", 1);
  const std::string id = Submit("a");
  const JobAssignment first = Sync(w1).assignments.at(0);
  Start(w1, first);
  const std::string w2 = Worker("w2", 1);
  clock_.Advance(kLeaseMs + 1);
  Sync(w2);  // w2 keeps its lease; w1 has been silent too long.
  ParkedSync parked(dispatcher_.get(), w2, {});
  WaitParked(1);
  dispatcher_->ExpireLeases();
  const SyncResult next = parked.Get();
  ASSERT_THAT(JobsOf(next), ElementsAre(id));
  EXPECT_EQ(next.assignments[0].attempt, 2);
  EXPECT_TRUE(next.assignments[0].resume);
  const JobRecord job = Job(id);
  EXPECT_EQ(job.retries, 1);
  EXPECT_EQ(job.attempts.at(1).worker_ids, std::vector<std::string>{w2});
  EXPECT_TRUE(Sync(w1).reregister);
}

// A lost worker's parked Sync is released and told to register again.
TEST_F(DispatcherEventsTest, LostWorkersParkedSyncIsToldToReregister) {
  const std::string w = Worker("w", 1);
  ParkedSync parked(dispatcher_.get(), w, {});
  WaitParked(1);
  clock_.Advance(kLeaseMs + 1);
  dispatcher_->ExpireLeases();
  EXPECT_TRUE(parked.Get().reregister);
}

// A worker that joins takes the queued job at once: its first parked Sync returns it.
TEST_F(DispatcherEventsTest, JoiningWorkerGetsTheQueuedJob) {
  const std::string id = Submit("a", 0, "slots_per_worker: 2");
  const std::string small = Worker("small", 1);
  EXPECT_EQ(State(id), JobState::kQueued);
  const std::string big = Worker("big", 2);  // The join is the event that places it.
  EXPECT_EQ(State(id), JobState::kScheduled);
  EXPECT_EQ(Job(id).worker_id, big);
  ParkedSync parked(dispatcher_.get(), big, {});
  EXPECT_THAT(JobsOf(parked.Get()), ElementsAre(id, id));  // Two ranks on it.
  EXPECT_TRUE(Sync(small).empty());
}

TEST_F(DispatcherEventsTest, NothingIsPlacedWhileDispatchingIsOff) {
  const std::string w = Worker("w", 1);
  dispatcher_->SetDispatching(false);
  const std::string id = Submit("a");
  EXPECT_THAT(Sync(w).assignments, IsEmpty());
  EXPECT_EQ(State(id), JobState::kQueued);
  dispatcher_->SetDispatching(true);  // Rebuilds the scheduler's view and places at once.
  EXPECT_EQ(State(id), JobState::kScheduled);
  EXPECT_THAT(JobsOf(Sync(w)), ElementsAre(id));
}

// A replica that lost the lease forgets its workers and attempts; taking over again, it
// rebuilds them from the store and the re-registrations: the running rank keeps its attempt,
// and new work is placed as before.
TEST_F(DispatcherEventsTest, ResetForgetsEverythingAndRecoverReattachesTheRunningAttempt) {
  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = 2;
  const std::string w = dispatcher_->RegisterWorker(info, {});
  const std::string id = Submit("a");
  const SyncResult placed = Sync(w);
  ASSERT_THAT(JobsOf(placed), ElementsAre(id));
  const JobAssignment a = placed.assignments[0];
  Start(w, a);
  ParkedSync parked(dispatcher_.get(), w, {Ref(a)});
  WaitParked(1);

  dispatcher_->SetDispatching(false);
  dispatcher_->Reset();
  EXPECT_TRUE(parked.Get().reregister);
  EXPECT_THAT(dispatcher_->ListWorkers(), IsEmpty());
  EXPECT_TRUE(Sync(w).reregister);
  EXPECT_EQ(State(id), JobState::kRunning);  // The store is left as it was.

  ASSERT_TRUE(dispatcher_->Recover().ok());
  dispatcher_->SetDispatching(true);
  const std::string again = dispatcher_->RegisterWorker(info, {Ref(a)});
  EXPECT_TRUE(Sync(again, {Ref(a)}).empty());  // Re-attached: nothing to start or stop.
  const std::string next = Submit("b");
  EXPECT_THAT(JobsOf(Sync(again, {Ref(a)})), ElementsAre(next));
  const std::vector<WorkerStatus> workers = dispatcher_->ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_THAT(workers[0].running_job_ids, ::testing::UnorderedElementsAre(id, next));
  EXPECT_EQ(Job(id).attempts.size(), 1u);
  EXPECT_EQ(Job(id).retries, 0);
}

// Waiting reasons asked right after an event buy a complete pass only once per interval; in
// between, a job the bounded event pass did not reach has no reason yet.
TEST_F(DispatcherEventsTest, WaitingReasonRunsACompletePassAtMostOncePerInterval) {
  Dispatcher::Options options{"/artifacts", kLeaseMs};
  options.complete_pass_interval_ms = 1000;
  UseBoundedScheduler(std::move(options));
  Worker("w", 1);
  ASSERT_EQ(State(Submit("busy")), JobState::kScheduled);  // Fills the only slot.
  const std::string a = Submit("a"), b = Submit("b"), c = Submit("c");
  EXPECT_FALSE(dispatcher_->WaitingReason(c).empty());  // The first complete pass.
  clock_.Advance(10);
  const std::string d = Submit("d");  // Its bounded pass examines `a` only.
  EXPECT_FALSE(dispatcher_->WaitingReason(a).empty());
  EXPECT_EQ(dispatcher_->WaitingReason(d), "");
  clock_.Advance(989);  // 999 ms after the complete pass.
  EXPECT_EQ(dispatcher_->WaitingReason(d), "");
  clock_.Advance(1);
  EXPECT_FALSE(dispatcher_->WaitingReason(d).empty());
  EXPECT_FALSE(dispatcher_->WaitingReason(b).empty());
}

// A listed page asks for its queued jobs' reasons together: in order, from at most one
// complete pass, and under the same interval as single questions.
TEST_F(DispatcherEventsTest, APageOfReasonsIsAnsweredInOrderFromOneCompletePass) {
  Dispatcher::Options options{"/artifacts", kLeaseMs};
  options.complete_pass_interval_ms = 1000;
  UseBoundedScheduler(std::move(options));
  Worker("w", 1);
  ASSERT_EQ(State(Submit("busy")), JobState::kScheduled);
  const std::string a = Submit("a"), b = Submit("b"), c = Submit("c");
  const int64_t passes = dispatcher_->CompletePasses();
  const std::vector<std::string> reasons = dispatcher_->WaitingReasons({c, a, b});
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0], dispatcher_->WaitingReason(c));
  EXPECT_EQ(reasons[1], dispatcher_->WaitingReason(a));
  EXPECT_EQ(reasons[2], dispatcher_->WaitingReason(b));
  for (const std::string& reason : reasons) EXPECT_FALSE(reason.empty());
  EXPECT_EQ(dispatcher_->CompletePasses(), passes + 1);
  clock_.Advance(10);
  const std::string d = Submit("d");  // Not reached by its bounded pass; no pass due yet.
  EXPECT_THAT(dispatcher_->WaitingReasons({a, d, "no-such-job"}), ElementsAre(reasons[1], "", ""));
  EXPECT_EQ(dispatcher_->CompletePasses(), passes + 1);
}

TEST_F(DispatcherEventsTest, WithoutAnIntervalEveryReasonAfterAnEventIsComplete) {
  UseBoundedScheduler(Dispatcher::Options{"/artifacts", kLeaseMs});
  Submit("a");
  EXPECT_FALSE(dispatcher_->WaitingReason(Submit("b")).empty());
  EXPECT_FALSE(dispatcher_->WaitingReason(Submit("c")).empty());
}

// The lease tick's complete pass holds the dispatcher's lock for O(queue): it is skipped when it
// could only explain (no worker could run any queued job, or the cluster is full), and still
// runs when free room may fit a job that the bounded event passes did not reach.
TEST_F(DispatcherEventsTest, TheLeaseTickSkipsACompletePassThatCouldOnlyExplain) {
  const std::string parked = Submit("parked");  // No worker at all: parked.
  dispatcher_->ExpireLeases();
  EXPECT_EQ(dispatcher_->CompletePasses(), 0);
  const std::string reason = dispatcher_->WaitingReason(parked);  // A question still buys one.
  EXPECT_FALSE(reason.empty());
  WaitForCompletePasses(1);
  // A pass counts when it starts; until it ends it may hold mu_, and a submit then waits in the
  // inbox, maybe past the next question. The tick's own pass (skipped: it could only explain)
  // waits for the question's to end (plan_mu_), so the submit below is applied before it returns.
  dispatcher_->ExpireLeases();
  Submit("another");  // Its bounded pass leaves the next question a complete pass to run.
  EXPECT_EQ(dispatcher_->WaitingReason(parked), reason);  // Kept, though not reported again.
  WaitForCompletePasses(2);
  EXPECT_EQ(dispatcher_->WaitingReason(parked), reason);
}

// A question about a job that has a reason answers with it at once; the complete pass it is
// due to start runs on the dispatcher's thread (it plans O(queue): 100-200 ms at 100k jobs).
TEST_F(DispatcherEventsTest, AQuestionAboutAJobWithAReasonDoesNotWaitForThePassItStarts) {
  Dispatcher::Options options{"/artifacts", kLeaseMs};  // Questions due after every event.
  // Declared first, so destroyed last: once it is notified the hook (on the question thread)
  // touches nothing of this test's any more.
  absl::Notification planned;
  absl::Notification answered;
  std::atomic<bool> waited_for{false};
  options.after_plan_for_tests = [&] {
    if (planned.HasBeenNotified()) return;  // Passes plan one at a time (plan_mu_).
    waited_for = !answered.WaitForNotificationWithTimeout(absl::Seconds(10));
    planned.Notify();
  };
  UseOptions(options);
  const std::string parked = Submit("parked");  // No worker at all: its pass parks it.
  const std::string reason = dispatcher_->WaitingReason(parked);
  answered.Notify();
  EXPECT_FALSE(reason.empty());
  // A pass is counted when it begins, before its plan and the hook: wait for the hook itself.
  ASSERT_TRUE(planned.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(waited_for) << "the question waited for the pass it started";
  EXPECT_EQ(dispatcher_->WaitingReason(parked), reason);  // No event since: no pass is due.
  EXPECT_EQ(dispatcher_->CompletePasses(), 1);
}

TEST_F(DispatcherEventsTest, TheLeaseTickPlacesWhatTheBoundedPassesDidNotReach) {
  UseBoundedScheduler(Dispatcher::Options{"/artifacts", kLeaseMs});
  Worker("a", 1, {{"kind", "a"}});
  Worker("b", 1, {{"kind", "b"}});
  ASSERT_EQ(State(Submit("busy", 0, "selector: {kind: a}")), JobState::kScheduled);
  const std::string x = Submit("x", 0, "selector: {kind: a}");
  const std::string y = Submit("y", 0, "selector: {kind: b}");  // Its pass examines x only.
  ASSERT_EQ(State(y), JobState::kQueued);
  dispatcher_->ExpireLeases();
  EXPECT_EQ(dispatcher_->CompletePasses(), 1);
  EXPECT_EQ(State(y), JobState::kScheduled);
  Submit("z", 0, "selector: {kind: b}");
  dispatcher_->ExpireLeases();  // Both workers full, one priority: nothing could start.
  EXPECT_EQ(dispatcher_->CompletePasses(), 1);
  EXPECT_EQ(State(x), JobState::kQueued);
}

// A complete pass is planned without the dispatcher's lock: events run meanwhile (a hook on the
// planning thread submits and cancels; with the lock held it would deadlock), and what the plan
// decided is committed only where it still holds.
TEST_F(DispatcherEventsTest, EventsRunWhileACompletePassIsPlannedAndItsStalePlacementIsDropped) {
  Dispatcher::Options options{"/artifacts", kLeaseMs};
  options.complete_pass_interval_ms = 1'000'000;  // Questions read the tick's pass.
  std::string urgent, x;
  int plans = 0;
  options.after_plan_for_tests = [&] {
    if (plans++ > 0) return;
    urgent = Submit("urgent", 80, "selector: {kind: b}");  // Its own pass places it on b.
    ASSERT_TRUE(manager_->Cancel(x, "").ok());
  };
  UseBoundedScheduler(std::move(options));
  Worker("a", 1, {{"kind", "a"}});
  const std::string b = Worker("b", 1, {{"kind", "b"}});
  ASSERT_EQ(State(Submit("busy", 0, "selector: {kind: a}")), JobState::kScheduled);
  x = Submit("x", 0, "selector: {kind: a}");
  const std::string y = Submit("y", 0, "selector: {kind: b}");  // Its pass examines x only.
  ASSERT_EQ(State(y), JobState::kQueued);
  dispatcher_->ExpireLeases();  // Plans y on b; meanwhile urgent takes b.
  ASSERT_EQ(plans, 1);
  EXPECT_EQ(State(urgent), JobState::kScheduled);
  EXPECT_EQ(State(y), JobState::kQueued);  // Its planned placement no longer held.
  EXPECT_EQ(State(x), JobState::kCancelled);
  const std::vector<WorkerStatus> workers = dispatcher_->ListWorkers();
  ASSERT_EQ(workers.size(), 2u);
  for (const WorkerStatus& w : workers) EXPECT_EQ(w.running_job_ids.size(), 1u) << w.id;
  EXPECT_EQ(dispatcher_->WaitingReason(x), "");  // The plan's reason for x is not kept.
  EXPECT_EQ(plans, 1);
  clock_.Advance(1'000'000);  // The next question plans again, and explains y.
  EXPECT_THAT(dispatcher_->WaitingReason(y), ::testing::HasSubstr("slot"));
  EXPECT_EQ(plans, 2);
}

// A question that is due while another call plans a complete pass answers from the reasons it
// has (asked here from inside that pass's planning, where waiting for it would hang).
TEST_F(DispatcherEventsTest, AQuestionDoesNotWaitForACompletePassBeingPlanned) {
  Dispatcher::Options options{"/artifacts", kLeaseMs};  // Questions due after every event.
  std::string second, asked = "unasked";
  int plans = 0;
  options.after_plan_for_tests = [&] {
    if (plans++ > 0) return;
    second = Submit("second", 0, "selector: {kind: a}");  // The cluster is full: unexamined.
    asked = dispatcher_->WaitingReason(second);
  };
  UseOptions(options);
  Worker("a", 1, {{"kind", "a"}});
  ASSERT_EQ(State(Submit("busy", 0, "selector: {kind: a}")), JobState::kScheduled);
  const std::string first = Submit("first", 0, "selector: {kind: a}");
  EXPECT_FALSE(dispatcher_->WaitingReason(first).empty());  // Plans; the hook asks meanwhile.
  EXPECT_EQ(plans, 1);
  EXPECT_EQ(asked, "");  // At once, from what it had: no pass had explained it yet.
  EXPECT_THAT(dispatcher_->WaitingReason(second), ::testing::HasSubstr("slot"));
  EXPECT_EQ(plans, 2);  // That question planned a pass of its own.
}

// A plan made while nothing happens is committed whole, and the tick after it, with nothing
// changed, plans nothing.
TEST_F(DispatcherEventsTest, AnUndisturbedPlanIsCommittedWhole) {
  UseBoundedScheduler(Dispatcher::Options{"/artifacts", kLeaseMs});
  Worker("a", 1, {{"kind", "a"}});
  Worker("b", 2, {{"kind", "b"}});
  ASSERT_EQ(State(Submit("busy", 0, "selector: {kind: a}")), JobState::kScheduled);
  const std::string x = Submit("x", 0, "selector: {kind: a}");
  const std::string y = Submit("y", 0, "selector: {kind: b}");
  const std::string z = Submit("z", 0, "selector: {kind: b}");
  ASSERT_EQ(State(z), JobState::kQueued);
  dispatcher_->ExpireLeases();
  EXPECT_EQ(State(y), JobState::kScheduled);
  EXPECT_EQ(State(z), JobState::kScheduled);
  EXPECT_FALSE(dispatcher_->WaitingReason(x).empty());
  dispatcher_->ExpireLeases();
  EXPECT_EQ(dispatcher_->CompletePasses(), 1);
}

}  // namespace
}  // namespace lmtrain
