// Dispatcher::JobCreated never waits for the dispatcher's lock: while another call holds it (here
// a store read that the test keeps blocked), a submit returns at once and the dispatcher's inbox
// thread queues and places its job when the lock is free.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "server/dispatcher.h"
#include "server/job_manager.h"
#include "server/scheduler/scheduler.h"
#include "storage/in_memory_job_store.h"
#include "tests/server/fake_clock.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

// GetJob of job `gated` blocks until Release(): a call that reads it under the dispatcher's lock
// holds that lock until then.
class GatedStore : public InMemoryJobStore {
 public:
  explicit GatedStore(std::string gated) : gated_(std::move(gated)) {}
  absl::StatusOr<JobRecord> GetJob(const std::string& id) override {
    if (id == gated_ && !release_.HasBeenNotified()) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    return InMemoryJobStore::GetJob(id);
  }
  void WaitEntered() { entered_.WaitForNotification(); }
  void Release() { release_.Notify(); }

 private:
  const std::string gated_;
  absl::Notification entered_, release_;
};

JobState StateOf(JobStore& store, const std::string& id) { return store.GetJob(id)->state; }

TEST(DispatcherInboxTest, ASubmitDoesNotWaitWhileAnotherCallHoldsTheDispatcher) {
  GatedStore store("1");  // The first job's id.
  FakeClock clock;
  EventHub hub;
  auto policy = scheduler::MakePolicyScheduler({});
  Dispatcher dispatcher(&store, &clock, &hub, policy.get(), Dispatcher::Options{"/artifacts"});
  JobManager manager(&store, &clock, &hub, &dispatcher);
  WorkerInfo info;
  info.name = "w";
  info.slots = 2;
  info.rendezvous_port_base = 40000;
  info.rendezvous_port_count = 2;
  dispatcher.RegisterWorker(info, {});

  NewJob first;  // Created behind the dispatcher's back; JobQueued reads it under the lock.
  first.name = "first";
  first.task = "clm";
  auto first_id = store.CreateJob(first);
  ASSERT_TRUE(first_id.ok()) << first_id.status();
  ASSERT_EQ(*first_id, "1");
  std::thread holder([&] { dispatcher.JobQueued(*first_id); });
  store.WaitEntered();  // The dispatcher's lock is held from here to Release().

  testing::JobFolder folder("second");
  absl::Notification submitted;
  absl::StatusOr<std::string> second;
  std::thread submitter([&] {
    second = manager.Submit(folder.Request());
    submitted.Notify();
  });
  const bool returned = submitted.WaitForNotificationWithTimeout(absl::Seconds(10));
  EXPECT_TRUE(returned) << "the submit waited for the dispatcher's lock";
  if (returned) {  // No ASSERT before the joins below: a thread left unjoined aborts the run.
    EXPECT_TRUE(second.ok()) << second.status();
    if (second.ok()) {
      EXPECT_EQ(StateOf(store, *second), JobState::kQueued);  // Not placed: the lock is held.
    }
  }
  store.Release();
  holder.join();
  submitter.join();
  ASSERT_TRUE(second.ok()) << second.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);  // The inbox thread's turn.
  while (StateOf(store, *second) != JobState::kScheduled && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(StateOf(store, *second), JobState::kScheduled);
  EXPECT_EQ(StateOf(store, *first_id), JobState::kScheduled);
}

}  // namespace
}  // namespace lmtrain
