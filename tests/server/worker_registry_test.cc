// WorkerRegistry: ids, leases, rendezvous ports, and the per-worker wake-up of parked Syncs
// (real threads parked on a real mutex; the tests wait on the registry's parked count).
#include "server/worker_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;

WorkerInfo Info(const std::string& host, int ports = 2) {
  WorkerInfo info;
  info.hostname = host;
  info.rendezvous_port_base = 41000;
  info.rendezvous_port_count = ports;
  return info;
}

TEST(WorkerRegistryTest, AddGivesDistinctIdsAndDefaultsTheAdvertiseAddress) {
  WorkerRegistry registry;
  const std::string a = registry.Add(Info("a.host"), 100);
  WorkerInfo with_address = Info("b.host");
  with_address.advertise_address = "10.0.0.2";
  const std::string b = registry.Add(with_address, 100);
  EXPECT_NE(a, b);
  EXPECT_EQ(registry.Find(a)->info.advertise_address, "a.host");
  EXPECT_EQ(registry.Find(b)->info.advertise_address, "10.0.0.2");
  registry.Remove(a);
  EXPECT_FALSE(registry.Contains(a));
  EXPECT_EQ(registry.Find(a), nullptr);
}

TEST(WorkerRegistryTest, ExpiredListsWorkersSilentForLongerThanTheLease) {
  WorkerRegistry registry;
  const std::string old_one = registry.Add(Info("a"), 100);
  const std::string fresh = registry.Add(Info("b"), 900);
  EXPECT_THAT(registry.Expired(1100, 1000), ElementsAre());
  EXPECT_THAT(registry.Expired(1101, 1000), ElementsAre(old_one));
  registry.Find(old_one)->last_seen_ms = 1100;
  EXPECT_THAT(registry.Expired(1901, 1000), ElementsAre(fresh));
}

TEST(WorkerRegistryTest, PortsComeFromTheWorkersRangeUntilItIsUsedUp) {
  WorkerRegistry registry;
  const std::string w = registry.Add(Info("a", 2), 0);
  EXPECT_EQ(registry.TakePort(w), 41000);
  EXPECT_EQ(registry.TakePort(w), 41001);
  EXPECT_EQ(registry.TakePort(w), std::nullopt);
  registry.ReleasePort(w, 41000);
  EXPECT_EQ(registry.TakePort(w), 41000);
  EXPECT_EQ(registry.TakePort("unknown"), std::nullopt);
}

// Two Syncs parked on two workers: Wake releases exactly the one it names; Shutdown the rest.
TEST(WorkerRegistryTest, WakeReleasesOnlyThatWorkersParkedSync) {
  absl::Mutex mu;
  WorkerRegistry registry;
  std::string w1, w2;
  {
    absl::MutexLock lock(&mu);
    w1 = registry.Add(Info("a"), 0);
    w2 = registry.Add(Info("b"), 0);
  }
  bool woken1 = false, woken2 = true, done1 = false, done2 = false;
  auto park = [&](const std::string& id, bool* woken, bool* done) {
    absl::MutexLock lock(&mu);
    *woken = registry.WaitForWake(&mu, id, absl::Now() + absl::Seconds(20));
    *done = true;
  };
  std::thread t1(park, w1, &woken1, &done1);
  std::thread t2(park, w2, &woken2, &done2);
  auto parked = [&] { return registry.parked() == 2; };
  {
    absl::MutexLock lock(&mu);
    // EXPECT, not ASSERT: the threads must still be released and joined.
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&parked), absl::Seconds(10)));
    registry.Wake(w1);
    auto one_left = [&] { return done1 && registry.parked() == 1; };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&one_left), absl::Seconds(10)));
    EXPECT_TRUE(woken1);
    EXPECT_FALSE(done2);
    registry.Shutdown();
  }
  t1.join();
  t2.join();
  EXPECT_FALSE(woken2);  // Released by the shutdown, not woken.
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(registry.WaitForWake(&mu, w1, absl::Now() + absl::Seconds(20)));  // At once.
}

// A removed worker's parked Sync is released (woken), so that it can tell the worker to
// register again.
TEST(WorkerRegistryTest, RemoveReleasesTheWorkersParkedSync) {
  absl::Mutex mu;
  WorkerRegistry registry;
  std::string w;
  {
    absl::MutexLock lock(&mu);
    w = registry.Add(Info("a"), 0);
  }
  bool woken = false;
  std::thread t([&] {
    absl::MutexLock lock(&mu);
    woken = registry.WaitForWake(&mu, w, absl::Now() + absl::Seconds(20));
  });
  {
    absl::MutexLock lock(&mu);
    auto parked = [&] { return registry.parked() == 1; };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&parked), absl::Seconds(10)));
    registry.Remove(w);
  }
  t.join();
  EXPECT_TRUE(woken);
}

}  // namespace
}  // namespace lmtrain
