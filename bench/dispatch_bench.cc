// lm-bench-dispatch: per-event latency of lm-server's Dispatcher — the incremental scheduler and
// the glue around it (mirror updates, placement written to the store, the pushed work) — over an
// in-memory store and a manual clock, without gRPC. lm-bench-scheduler times the scheduler core
// alone; this times what one event costs the server.
//
//   lm-bench-dispatch [--workers 10000] [--queued 100000] [--events 5000] [--seed 1]
//                     [--max-examined 100] [--gpu-jobs 20] [--tick-every 100]
//                     [--tick-beside-ms 0] [--event-gap-us 0] [--questions 0]
//                     [--question-interval-ms 1000]
//
// Workers have 1/2/4/8 slots; 20% are GPU workers (8 slots, 8 GPUs, gpu=h100). Jobs come from 8
// users with priorities 0/10/50/80 and run on one worker with 1-4 slots; --gpu-jobs percent ask
// for 1/2/4/8 GPUs (one process per GPU). The queue is submitted first (each submit is an event
// with its pass, untimed), then `events` random events are timed, each as the calls that carry
// it: a finish (a worker's last exit report, then that worker's Sync, which runs the pass and
// returns its next jobs), a submit (JobQueued), a cancel of a queued job, a worker joining.
// After every --tick-every events, the lease tick (ExpireLeases, as lm-server's expiry thread
// calls it; no lease runs out here) is timed too, as its own kind "tick", outside "all": it is
// not an event, but it holds the dispatcher's lock, and its complete pass, when it runs one,
// costs O(queue).
// With --tick-beside-ms T, the lease tick runs instead on a thread of its own, as in lm-server:
// ExpireLeases, then T ms of sleep, for as long as the events run (their count is reported as
// "ticks", their wall time as the tick figures). With --event-gap-us G, event i is due G*i µs
// after the first (open loop) and its wall time counts from then, so that an event held up
// behind the dispatcher's lock delays the ones due after it as calls from many clients would
// be, and each of them shows the wait (no coordinated omission).
// With --questions P, P percent of the events are questions instead ("question": why does a
// random submitted job wait, as GetJob and `lmctl explain` ask; Dispatcher::WaitingReason),
// with Options::complete_pass_interval_ms = --question-interval-ms (lm-server's default 1000;
// the manual clock advances 10 ms per event).
// Prints wall-clock p50/p99/max per kind and overall, and the p99 of this thread's CPU time
// (which the load of other processes does not inflate); the last line is JSON:
//   {"workers", "queued", "events", "p50_ms", "p99_ms", "max_ms", "cpu_p99_ms", "max_examined",
//    "gpu_jobs_percent", "running", "queued_after", "ticks", "tick_p50_ms", "tick_max_ms",
//    "complete_passes", "pass_hold_max_ms"}
// pass_hold_max_ms: the longest the timed events' complete passes held the dispatcher's lock at
// once, which is the longest an event could wait for one.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/command_line.h"
#include "common/malloc_tuning.h"
#include "server/dispatcher.h"
#include "storage/in_memory_job_store.h"

namespace lmtrain::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

class ManualClock final : public Clock {
 public:
  int64_t NowMs() const override { return now_ms_.load(std::memory_order_relaxed); }
  void Advance(int64_t ms) { now_ms_.fetch_add(ms, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> now_ms_{1};
};

struct Flags {
  int64_t workers = 10000;
  int64_t queued = 100000;
  int64_t events = 5000;
  int64_t seed = 1;
  int64_t max_examined = 100;
  int64_t gpu_jobs = 20;
  int64_t tick_every = 100;
  int64_t tick_beside_ms = 0;
  int64_t event_gap_us = 0;
  int64_t questions = 0;
  int64_t question_interval_ms = 1000;
};

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Wall-clock and thread-CPU milliseconds of each timed event of one kind.
struct Times {
  std::vector<double> wall;
  std::vector<double> cpu;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

class Bench {
 public:
  explicit Bench(const Flags& f)
      : f_(f),
        rng_(f.seed),
        policy_(scheduler::MakePolicyScheduler(Options(f))),
        dispatcher_(&store_, &clock_, &hub_, policy_.get(), DispatcherOptions(f)) {}

  void Setup() {
    for (int64_t i = 0; i < f_.workers; ++i) AddWorker();
    for (int64_t i = 0; i < f_.queued; ++i) Submit();
    dispatcher_.ExpireLeases();  // lm-server's tick would have run meanwhile.
    dispatcher_.TakeLongestCompletePassHoldMs();
  }

  // Runs the events; returns the latency of each, by kind.
  std::map<std::string, Times> Run() {
    std::map<std::string, Times> times;
    std::atomic<bool> done{false};
    std::thread ticker;
    if (f_.tick_beside_ms > 0) ticker = std::thread([&] { TickBeside(done, &times["tick"]); });
    const SteadyClock::time_point first = SteadyClock::now();
    for (int64_t i = 0; i < f_.events; ++i) {
      const SteadyClock::time_point due = first + std::chrono::microseconds(f_.event_gap_us * i);
      if (f_.event_gap_us > 0) std::this_thread::sleep_until(due);
      clock_.Advance(10);
      timed_ = false;
      const bool question = f_.questions > 0 && static_cast<int64_t>(rng_() % 100) < f_.questions;
      const int pick = question ? -1 : static_cast<int>(rng_() % 100);
      const char* kind = question    ? "question"
                         : pick < 45 ? "finish"
                         : pick < 90 ? "submit"
                         : pick < 95 ? "cancel"
                                     : "join";
      if (question) {
        Ask();
      } else if (pick < 45) {
        Finish();
      } else if (pick < 90) {
        Timed([&] { Submit(); });
      } else if (pick < 95) {
        CancelQueued();
      } else {
        Timed([&] { AddWorker(); });
      }
      if (timed_ && f_.event_gap_us > 0) {
        wall_ms_ = std::chrono::duration<double, std::milli>(end_ - due).count();
      }
      if (timed_) Record(&times[kind]);  // Else nothing to finish or cancel.
      if (f_.tick_beside_ms == 0 && f_.tick_every > 0 && (i + 1) % f_.tick_every == 0) {
        Timed([&] { dispatcher_.ExpireLeases(); });
        Record(&times["tick"]);
      }
    }
    done = true;
    if (ticker.joinable()) ticker.join();
    return times;
  }

  // The lm-server expiry thread's loop; `ticks` gets each tick's wall and thread-CPU time.
  void TickBeside(const std::atomic<bool>& done, Times* ticks) {
    while (!done) {
      const SteadyClock::time_point start = SteadyClock::now();
      const double cpu = ThreadCpuMs();
      dispatcher_.ExpireLeases();
      ticks->cpu.push_back(ThreadCpuMs() - cpu);
      ticks->wall.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
      std::this_thread::sleep_for(std::chrono::milliseconds(f_.tick_beside_ms));
    }
  }

  int64_t CompletePasses() { return dispatcher_.CompletePasses(); }
  double LongestHoldMs() { return dispatcher_.TakeLongestCompletePassHoldMs(); }

  int64_t Count(JobState state) {
    auto jobs = store_.ListJobs({{state}, 1 << 30});
    return jobs.ok() ? static_cast<int64_t>(jobs->size()) : -1;
  }

 private:
  static Dispatcher::Options DispatcherOptions(const Flags& f) {
    Dispatcher::Options o{"/bench", int64_t{1} << 50};
    o.complete_pass_interval_ms = f.question_interval_ms;
    return o;
  }

  // Why a random submitted job waits ("" once it was placed or cancelled).
  void Ask() {
    const std::string id = queued_.empty() ? "" : queued_[rng_() % queued_.size()];
    Timed([&] { (void)dispatcher_.WaitingReason(id); });
  }

  static scheduler::SchedulerOptions Options(const Flags& f) {
    scheduler::SchedulerOptions o;
    o.seed = static_cast<uint64_t>(f.seed);
    o.max_jobs_examined = static_cast<int>(f.max_examined);
    return o;
  }

  void Record(Times* times) const {
    times->wall.push_back(wall_ms_);
    times->cpu.push_back(cpu_ms_);
  }

  // Runs f as the event's timed part.
  template <typename F>
  void Timed(F&& f) {
    const double cpu = ThreadCpuMs();
    const SteadyClock::time_point start = SteadyClock::now();
    f();
    end_ = SteadyClock::now();
    wall_ms_ = std::chrono::duration<double, std::milli>(end_ - start).count();
    cpu_ms_ = ThreadCpuMs() - cpu;
    timed_ = true;
  }

  void AddWorker() {
    WorkerInfo info;
    info.name = absl::StrCat("w", workers_.size());
    info.hostname = info.name;
    const bool gpu = rng_() % 100 < 20;
    info.slots = gpu ? 8 : 1 << (rng_() % 4);
    if (gpu) {
      info.labels["gpu"] = "h100";
      for (int g = 0; g < 8; ++g) info.devices.push_back({"cuda", g, "H100", 80LL << 30, ""});
    }
    workers_.push_back(dispatcher_.RegisterWorker(info, {}));
  }

  void Submit() {
    NewJob job;
    job.name = "bench";
    job.task = "clm";
    job.user = absl::StrCat("user", rng_() % 8);
    job.priority = std::vector<int>{0, 10, 50, 80}[rng_() % 4];
    const bool gpu = static_cast<int64_t>(rng_() % 100) < f_.gpu_jobs;
    job.resources.gpus_per_worker = gpu ? 1 << (rng_() % 4) : 0;
    job.resources.slots_per_worker = gpu ? job.resources.gpus_per_worker : 1 + rng_() % 4;
    job.created_at_ms = clock_.NowMs();
    auto id = store_.CreateJob(job);
    if (!id.ok()) return;
    queued_.push_back(*id);
    dispatcher_.JobQueued(*id);
  }

  // A random worker's ranks all exit: the last report and the worker's next Sync are the event.
  void Finish() {
    const std::string& w = workers_[rng_() % workers_.size()];
    auto pending = dispatcher_.Sync(w, running_[w]);
    if (!pending.ok()) return;
    for (const JobAssignment& a : pending->assignments) {  // Acknowledge and start them.
      RankRef ref{a.job_id, a.rank, a.attempt, a.gpus};
      (void)dispatcher_.ReportEvents(w, ref, {JobStartedReport{1}});
      running_[w].push_back(ref);
    }
    for (const RankRef& stop : pending->stop) Forget(w, stop);
    if (running_[w].empty()) return;
    const std::string job = running_[w].front().job_id;
    std::vector<RankRef> ranks;
    for (const RankRef& r : running_[w]) {
      if (r.job_id == job) ranks.push_back(r);
    }
    for (size_t i = 0; i + 1 < ranks.size(); ++i) Exit(w, ranks[i]);
    Timed([&] {
      Exit(w, ranks.back());
      (void)dispatcher_.Sync(w, running_[w]);
    });
  }

  void Exit(const std::string& w, const RankRef& ref) {
    (void)dispatcher_.ReportEvents(w, ref, {JobExitedReport{0, 0, "", false}});
    Forget(w, ref);
  }

  void Forget(const std::string& w, const RankRef& ref) {
    std::vector<RankRef>& on = running_[w];
    on.erase(std::remove_if(on.begin(), on.end(),
                            [&](const RankRef& r) {
                              return r.job_id == ref.job_id && r.rank == ref.rank &&
                                     r.attempt == ref.attempt;
                            }),
             on.end());
  }

  void CancelQueued() {
    while (!queued_.empty()) {
      const size_t i = rng_() % queued_.size();
      const std::string id = queued_[i];
      queued_[i] = queued_.back();
      queued_.pop_back();
      auto job = store_.GetJob(id);
      if (!job.ok() || job->state != JobState::kQueued) continue;
      Timed([&] { (void)dispatcher_.Cancel(id, "lm-bench-dispatch"); });
      return;
    }
  }

  const Flags f_;
  std::mt19937_64 rng_;
  InMemoryJobStore store_;
  ManualClock clock_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> policy_;
  Dispatcher dispatcher_;
  std::vector<std::string> workers_;
  std::vector<std::string> queued_;  // Submitted ids (some placed or cancelled since).
  std::map<std::string, std::vector<RankRef>> running_;  // What each worker runs.
  bool timed_ = false;  // The last event had a timed part: wall_ms_ and cpu_ms_.
  double wall_ms_ = 0;
  double cpu_ms_ = 0;
  SteadyClock::time_point end_;  // When the last timed part ended.
};

int Main(int argc, char** argv) {
  Flags f;
  CommandLine cl("lm-bench-dispatch", "per-event latency of lm-server's Dispatcher");
  cl.AddInt("workers", &f.workers, "workers");
  cl.AddInt("queued", &f.queued, "jobs submitted before the timed events");
  cl.AddInt("events", &f.events, "timed events");
  cl.AddInt("seed", &f.seed, "random seed (cluster, jobs, events, tie-breaks)");
  cl.AddInt("max-examined", &f.max_examined, "SchedulerOptions::max_jobs_examined");
  cl.AddInt("gpu-jobs", &f.gpu_jobs, "percent of jobs that ask for GPUs");
  cl.AddInt("tick-every", &f.tick_every, "time a lease tick after this many events (0: none)");
  cl.AddInt("tick-beside-ms", &f.tick_beside_ms,
            "run the lease tick on its own thread, sleeping this long between ticks (0: inline)");
  cl.AddInt("event-gap-us", &f.event_gap_us, "sleep this long before each event");
  cl.AddInt("questions", &f.questions, "percent of events that ask why a job waits");
  cl.AddInt("question-interval-ms", &f.question_interval_ms,
            "Dispatcher::Options::complete_pass_interval_ms");
  auto positional = cl.Parse(argc - 1, argv + 1);
  if (!positional.ok()) {
    std::cerr << positional.status().message() << "\n";
    return IsHelpRequest(positional.status()) ? 0 : 2;
  }
  if (f.workers < 1 || f.queued < 0 || f.events < 1 || f.max_examined < 0 || f.tick_every < 0 ||
      f.tick_beside_ms < 0 || f.event_gap_us < 0 || f.questions < 0 || f.questions > 100 ||
      f.question_interval_ms < 0) {
    std::cerr << "lm-bench-dispatch: --workers/--events >= 1, --queued/--max-examined/"
                 "--tick-every/--tick-beside-ms/--event-gap-us/--question-interval-ms >= 0, "
                 "--questions 0-100\n";
    return 2;
  }
  TuneMallocForServer();  // As lm-server does.
  Bench bench(f);
  const double setup_ms = std::chrono::duration<double, std::milli>(
      [&] {
        const SteadyClock::time_point start = SteadyClock::now();
        bench.Setup();
        return SteadyClock::now() - start;
      }())
                              .count();
  const int64_t running = bench.Count(JobState::kScheduled) + bench.Count(JobState::kRunning);
  std::cout << absl::StrFormat("setup: %d workers, %d submitted in %.1f s; %d running\n",
                               f.workers, f.queued, setup_ms / 1000, running);
  Times all, ticks;
  auto print = [](const std::string& kind, const Times& t) {
    std::cout << absl::StrFormat(
        "%-7s n=%-5d p50 %.3f ms  p99 %.3f ms  max %.3f ms  (CPU p50 %.3f ms, p99 %.3f ms)\n",
        kind, t.wall.size(), Percentile(t.wall, 0.5), Percentile(t.wall, 0.99),
        t.wall.empty() ? 0 : *std::max_element(t.wall.begin(), t.wall.end()),
        Percentile(t.cpu, 0.5), Percentile(t.cpu, 0.99));
  };
  for (const auto& [kind, t] : bench.Run()) {
    print(kind, t);
    if (kind == "tick") {
      ticks = t;
      continue;
    }
    all.wall.insert(all.wall.end(), t.wall.begin(), t.wall.end());
    all.cpu.insert(all.cpu.end(), t.cpu.begin(), t.cpu.end());
  }
  print("all", all);
  const double hold_ms = bench.LongestHoldMs();
  std::cout << absl::StrFormat(
      "complete passes held the dispatcher's lock at most %.3f ms at once\n", hold_ms);
  const double p50 = Percentile(all.wall, 0.5), p99 = Percentile(all.wall, 0.99);
  const double max = all.wall.empty() ? 0 : *std::max_element(all.wall.begin(), all.wall.end());
  std::cout << absl::StrFormat(
      "{\"workers\": %d, \"queued\": %d, \"events\": %d, \"p50_ms\": %.4f, \"p99_ms\": %.4f, "
      "\"max_ms\": %.3f, \"cpu_p99_ms\": %.4f, \"max_examined\": %d, \"gpu_jobs_percent\": %d, "
      "\"running\": %d, \"queued_after\": %d, \"ticks\": %d, \"tick_p50_ms\": %.3f, "
      "\"tick_max_ms\": %.3f, \"complete_passes\": %d, \"pass_hold_max_ms\": %.3f}\n",
      f.workers, f.queued, all.wall.size(), p50, p99, max, Percentile(all.cpu, 0.99),
      f.max_examined, f.gpu_jobs,
      bench.Count(JobState::kScheduled) + bench.Count(JobState::kRunning),
      bench.Count(JobState::kQueued), ticks.wall.size(), Percentile(ticks.wall, 0.5),
      ticks.wall.empty() ? 0 : *std::max_element(ticks.wall.begin(), ticks.wall.end()),
      bench.CompletePasses(), hold_ms);
  return 0;
}

}  // namespace
}  // namespace lmtrain::bench

int main(int argc, char** argv) { return lmtrain::bench::Main(argc, argv); }
