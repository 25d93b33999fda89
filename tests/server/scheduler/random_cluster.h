// RandomCluster: a seeded model of a small cluster for the randomized suites. It holds the
// truth as a ClusterSnapshot and makes random jobs and events; the suites mirror each event into
// an IncrementalScheduler and compare its decisions with MakePolicyScheduler's over the snapshot.
//
// Workers: a permanent core (8 unlabelled and 4 gpu=h100 workers of 8 slots) that never leaves,
// plus extra workers of 1..8 slots that come and go. With feasible_only, every job fits the core
// (at most 4 workers, 8 slots, selector {} or gpu=h100); otherwise some jobs never fit (gpu=tpu,
// 16 slots, 20 workers) or are invalid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "server/scheduler/scheduler.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler::testing {

class RandomCluster {
 public:
  RandomCluster(uint64_t seed, bool feasible_only) : rng_(seed), feasible_only_(feasible_only) {
    snapshot_.now_ms = 1'000'000;
    for (int i = 0; i < 8; ++i) snapshot_.workers.push_back(Worker("core" + Id(i), 8, 8));
    for (int i = 0; i < 4; ++i) snapshot_.workers.push_back(Worker("h" + Id(i), 8, 8, kH100()));
    for (int i = 0; i < 6; ++i) snapshot_.workers.push_back(NewExtraWorker());
    for (const char* user : {"alice", "bob", "carol", "dave"}) {
      snapshot_.users[user] = Policy(1 + Below(3), Below(3) == 0 ? 2 : 0);
    }
  }

  ClusterSnapshot& snapshot() { return snapshot_; }
  std::mt19937_64& rng() { return rng_; }
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  QueuedJob NewJob() {
    const int64_t seq = ++seq_;
    static const char* const kUsers[] = {"alice", "bob", "carol", "dave", "erin"};
    const int priority = std::vector<int>{0, 0, 10, 50, 80}[Below(5)];
    int workers = Below(4) == 0 ? 1 + Below(4) : 1;
    int slots = std::vector<int>{1, 1, 2, 4, 8}[Below(5)];
    Labels selector;
    if (Below(4) == 0) selector = kH100();
    if (!feasible_only_) {
      switch (Below(12)) {
        case 0:
          selector = {{"gpu", "tpu"}};
          break;
        case 1:
          slots = 16;
          break;
        case 2:
          workers = 20;
          break;
        case 3:
          workers = 0;
          break;
        default:
          break;
      }
    }
    QueuedJob job =
        Queued("j" + Id(seq), kUsers[Below(5)], priority, seq, Request(workers, slots, selector));
    job.queued_at_ms = snapshot_.now_ms;
    requests_[job.id] = job;
    return job;
  }

  // The job as it was first queued (a requeued job keeps its seq).
  const QueuedJob& Original(const std::string& id) const { return requests_.at(id); }

  WorkerSnapshot NewExtraWorker() {
    const int total = 1 + Below(8);
    Labels labels;
    if (Below(3) == 0) labels = kH100();
    return Worker("x" + Id(next_worker_++), total, total, labels);
  }

  // An extra worker (not a core one) index in snapshot().workers, or -1.
  int RandomExtraWorker() {
    std::vector<int> extra;
    for (int i = 0; i < static_cast<int>(snapshot_.workers.size()); ++i) {
      if (snapshot_.workers[i].id[0] == 'x') extra.push_back(i);
    }
    return extra.empty() ? -1 : extra[Below(static_cast<int>(extra.size()))];
  }

 private:
  static Labels kH100() { return {{"gpu", "h100"}}; }
  static std::string Id(int64_t n) { return std::to_string(n); }

  std::mt19937_64 rng_;
  const bool feasible_only_;
  ClusterSnapshot snapshot_;
  std::map<std::string, QueuedJob> requests_;
  int64_t seq_ = 0;
  int next_worker_ = 0;
};

}  // namespace lmtrain::scheduler::testing
