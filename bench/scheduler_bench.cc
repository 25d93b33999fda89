// lm-bench-scheduler: per-event decision latency of the IncrementalScheduler on a simulated
// cluster, next to one full MakePolicyScheduler pass over the same state.
//
//   lm-bench-scheduler [--workers 10000] [--queued 100000] [--events 10000] [--seed 1]
//                      [--max-examined 100] [--users 8] [--event-gap-us 0] [--gpu-jobs 20]
//
// Builds `workers` workers (1/2/4/8 slots, zone=a..d, some gpu=h100 with 8 GPUs and 8 slots or
// gpu=a100 with 4 GPUs and 4 or 8 slots) and `queued` jobs (users with weights 1..4, priorities
// 0/10/50/80, gangs of 1..8 workers, 1..8 slots per worker, some with selectors; --gpu-jobs
// percent of them ask for 1/2/4/8 GPUs per worker, one process per GPU), fills the cluster with one ScheduleAll, then replays `events`
// random events (a job finishes, a job arrives, a preempted job exits and is requeued, a worker
// leaves or joins), each followed by one bounded Schedule() (max_jobs_examined). Only Schedule()
// is timed. By default events come back to back, so the process never sleeps; --event-gap-us
// sleeps that long before each event, as an event-driven dispatcher idles between events (on a
// loaded machine the kernel then tends to run each short decision without preempting it).
// Prints p50/p99/max decision time (wall and this thread's CPU time) and the time of one
// MakePolicyScheduler pass over the final state (indexing the snapshot included); the last line
// is JSON:
//   {"workers": ..., "queued": ..., "events": ..., "p50_ms": ..., "p99_ms": ..., "max_ms": ...,
//    "full_pass_ms": ..., "cpu_p99_ms": ..., "gpu_jobs_percent": ...}
// (cpu_p99_ms: the decision's CPU time alone, which machine load does not inflate).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/scheduler/incremental_scheduler.h"

namespace {

using lmtrain::scheduler::ClusterSnapshot;
using lmtrain::scheduler::Decision;
using lmtrain::scheduler::IncrementalScheduler;
using lmtrain::scheduler::QueuedJob;
using lmtrain::scheduler::RunningJob;
using lmtrain::scheduler::SchedulerOptions;
using lmtrain::scheduler::WorkerSnapshot;
using Clock = std::chrono::steady_clock;

struct Options {
  int workers = 10000;
  int queued = 100000;
  int events = 10000;
  uint64_t seed = 1;
  int max_examined = 100;
  int users = 8;
  int event_gap_us = 0;  // Idle time before each event (an event-driven dispatcher sleeps).
  int gpu_jobs = 20;     // Percent of jobs that ask for GPUs.
};

// The flag table: name and how to store its value.
struct Flag {
  const char* name;
  bool (*apply)(const std::string& value, Options* options);
};

int ToInt(const std::string& v) { return std::atoi(v.c_str()); }

const Flag kFlags[] = {
    {"--workers", [](const std::string& v, Options* o) { return (o->workers = ToInt(v)) > 0; }},
    {"--queued", [](const std::string& v, Options* o) { return (o->queued = ToInt(v)) >= 0; }},
    {"--events", [](const std::string& v, Options* o) { return (o->events = ToInt(v)) > 0; }},
    {"--seed",
     [](const std::string& v, Options* o) {
       o->seed = std::strtoull(v.c_str(), nullptr, 10);
       return !v.empty();
     }},
    {"--max-examined",
     [](const std::string& v, Options* o) { return (o->max_examined = ToInt(v)) >= 0; }},
    {"--users", [](const std::string& v, Options* o) { return (o->users = ToInt(v)) > 0; }},
    {"--event-gap-us",
     [](const std::string& v, Options* o) { return (o->event_gap_us = ToInt(v)) >= 0; }},
    {"--gpu-jobs",
     [](const std::string& v, Options* o) {
       o->gpu_jobs = ToInt(v);
       return o->gpu_jobs >= 0 && o->gpu_jobs <= 100;
     }},
};

bool ParseFlags(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags) {
      if (arg == f.name) flag = &f;
    }
    if (flag == nullptr || i + 1 >= argc) {
      std::cerr << (flag == nullptr ? "unknown flag " : "missing value for ") << arg << "\n";
      return false;
    }
    const std::string value = argv[++i];
    if (!flag->apply(value, options)) {
      std::cerr << "bad value for " << arg << ": \"" << value << "\"\n";
      return false;
    }
  }
  return true;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of this thread, in ms: on a shared machine wall time also counts the time other
// processes held the core; both are reported.
double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The simulated cluster: what the Dispatcher would know, mirrored into the scheduler.
class Simulation {
 public:
  explicit Simulation(const Options& options) : options_(options), rng_(options.seed) {}

  ClusterSnapshot Initial() {
    ClusterSnapshot s;
    for (int i = 0; i < options_.users; ++i) {
      s.users["user" + std::to_string(i)].weight = 1 + i % 4;
    }
    for (int i = 0; i < options_.workers; ++i) s.workers.push_back(NewWorker());
    for (int i = 0; i < options_.queued; ++i) s.queued.push_back(NewJob());
    for (const WorkerSnapshot& w : s.workers) workers_[w.id] = w;
    for (const QueuedJob& q : s.queued) queued_[q.id] = q;
    users_ = s.users;
    return s;
  }

  // Records a decision: placed jobs run, victims will exit on later events.
  void Apply(const Decision& d) {
    for (const auto& p : d.placements) {
      const QueuedJob& q = queued_.at(p.job_id);
      RunningJob& r = running_[p.job_id];
      r.id = q.id;
      r.user = q.user;
      r.priority = q.priority;
      r.started_at_ms = now_ms_;
      r.resources = q.resources;
      r.worker_ids = p.worker_ids;
      for (const std::string& w : p.worker_ids) {
        workers_[w].free_slots -= q.resources.slots_per_worker;
        workers_[w].free_gpus -= q.resources.gpus_per_worker;
      }
      specs_[q.id] = q;
      queued_.erase(q.id);
      running_ids_.push_back(q.id);
    }
    for (const auto& p : d.preemptions) {
      running_[p.job_id].preempting = true;
      victims_.push_back(p.job_id);
    }
  }

  // Applies one random event to the scheduler (and this model).
  void Event(IncrementalScheduler* inc) {
    now_ms_ += 1 + Below(2000);
    const int roll = Below(100);
    if (roll < 5 && !victims_.empty()) return PreemptedExits(inc);
    if (roll < 50) return Finish(inc);
    if (roll < 95) return Arrive(inc);
    if (roll < 97) return WorkerLeaves(inc);
    return WorkerJoins(inc);
  }

  ClusterSnapshot Snapshot() const {
    ClusterSnapshot s;
    s.now_ms = now_ms_;
    s.users = users_;
    for (const auto& [id, w] : workers_) {
      if (!gone_.count(id)) s.workers.push_back(w);
    }
    for (const auto& [id, r] : running_) s.running.push_back(r);
    for (const auto& [id, q] : queued_) s.queued.push_back(q);
    return s;
  }

  int64_t now_ms() const { return now_ms_; }
  size_t running() const { return running_.size(); }
  size_t queued() const { return queued_.size(); }

 private:
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  int Pick(const std::vector<int>& options) { return options[Below(int(options.size()))]; }

  WorkerSnapshot NewWorker() {
    WorkerSnapshot w;
    w.id = "w" + std::to_string(next_worker_++);
    w.total_slots = w.free_slots = Pick({1, 2, 2, 4, 4, 4, 8, 8, 8, 8});
    w.labels["zone"] = std::string(1, char('a' + Below(4)));
    const int gpu = Below(10);
    if (gpu < 2) {
      w.labels["gpu"] = "h100";
      w.total_slots = w.free_slots = 8;
      w.total_gpus = w.free_gpus = 8;
    }
    if (gpu == 2) {
      w.labels["gpu"] = "a100";
      w.total_slots = w.free_slots = Pick({4, 8});
      w.total_gpus = w.free_gpus = 4;
    }
    return w;
  }

  QueuedJob NewJob() {
    QueuedJob q;
    q.queued_seq = next_seq_++;
    q.id = "j" + std::to_string(q.queued_seq);
    q.user = "user" + std::to_string(Below(options_.users));
    q.priority = Pick({0, 0, 0, 0, 10, 10, 50, 50, 80});
    q.queued_at_ms = now_ms_;
    q.resources.workers = Pick({1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 8});
    q.resources.slots_per_worker = Pick({1, 1, 1, 2, 2, 4, 8});
    const int selector = Below(20);
    if (selector < 3) q.resources.selector["gpu"] = "h100";
    if (selector == 3) q.resources.selector["gpu"] = "a100";
    if (selector == 4) q.resources.selector["zone"] = "b";
    if (Below(100) < options_.gpu_jobs) {  // One process per GPU.
      q.resources.gpus_per_worker = q.resources.slots_per_worker = Pick({1, 1, 2, 4, 8});
    }
    return q;
  }

  void Arrive(IncrementalScheduler* inc) {
    QueuedJob q = NewJob();
    inc->AddQueued(q).IgnoreError();
    queued_[q.id] = std::move(q);
  }

  // A running job ends: its slots go back; with requeue it is queued again (original seq).
  void End(IncrementalScheduler* inc, const std::string& id, bool requeue) {
    auto it = running_.find(id);
    if (it == running_.end()) return;
    for (const std::string& w : it->second.worker_ids) {
      workers_[w].free_slots += it->second.resources.slots_per_worker;
      workers_[w].free_gpus += it->second.resources.gpus_per_worker;
    }
    running_.erase(it);
    inc->RemoveJob(id).IgnoreError();
    if (!requeue) return;
    inc->AddQueued(specs_.at(id)).IgnoreError();
    queued_[id] = specs_.at(id);
  }

  void Finish(IncrementalScheduler* inc) {
    while (!running_ids_.empty()) {
      const int i = Below(static_cast<int>(running_ids_.size()));
      std::swap(running_ids_[i], running_ids_.back());
      const std::string id = running_ids_.back();
      running_ids_.pop_back();
      auto it = running_.find(id);
      if (it == running_.end() || it->second.preempting) continue;  // stale or a victim
      return End(inc, id, /*requeue=*/false);
    }
  }

  void PreemptedExits(IncrementalScheduler* inc) {
    const std::string id = victims_.front();
    victims_.erase(victims_.begin());
    End(inc, id, /*requeue=*/true);
  }

  void WorkerLeaves(IncrementalScheduler* inc) {
    const std::string id = "w" + std::to_string(Below(next_worker_));
    if (gone_.count(id)) return;
    std::vector<std::string> on_it;
    for (const auto& [job, r] : running_) {
      if (std::count(r.worker_ids.begin(), r.worker_ids.end(), id) > 0) on_it.push_back(job);
    }
    for (const std::string& job : on_it) End(inc, job, /*requeue=*/true);
    inc->RemoveWorker(id);
    gone_[id] = true;
  }

  void WorkerJoins(IncrementalScheduler* inc) {
    WorkerSnapshot w = NewWorker();
    inc->UpsertWorker(w);
    workers_[w.id] = std::move(w);
  }

  const Options options_;
  std::mt19937_64 rng_;
  int64_t now_ms_ = 1'000'000;
  int next_worker_ = 0;
  int64_t next_seq_ = 0;
  std::map<std::string, lmtrain::scheduler::UserPolicy> users_;
  std::unordered_map<std::string, WorkerSnapshot> workers_;
  std::unordered_map<std::string, bool> gone_;
  std::unordered_map<std::string, QueuedJob> queued_;
  std::unordered_map<std::string, QueuedJob> specs_;  // Placed jobs' requests, for requeue.
  std::unordered_map<std::string, RunningJob> running_;
  std::vector<std::string> running_ids_;  // May hold ids that ended since (skipped).
  std::vector<std::string> victims_;      // Preempting, exit in order.
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t i = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[i];
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseFlags(argc, argv, &options)) {
    std::cerr << "usage: lm-bench-scheduler [--workers N] [--queued N] [--events N] [--seed S] "
                 "[--max-examined N] [--users N] [--event-gap-us N] [--gpu-jobs PERCENT]\n";
    return 2;
  }
  SchedulerOptions scheduler_options;
  scheduler_options.seed = options.seed;
  scheduler_options.max_jobs_examined = options.max_examined;
  Simulation sim(options);
  IncrementalScheduler inc(scheduler_options);

  auto start = Clock::now();
  inc.Reset(sim.Initial());
  const double reset_ms = Ms(Clock::now() - start);
  start = Clock::now();
  const Decision fill = inc.ScheduleAll(sim.now_ms());
  const double fill_ms = Ms(Clock::now() - start);
  sim.Apply(fill);
  std::printf("setup: %d workers, %d queued; Reset %.1f ms; first ScheduleAll %.1f ms placed %zu\n",
              options.workers, options.queued, reset_ms, fill_ms, fill.placements.size());

  std::vector<double> times, cpu_times;
  size_t placed = 0, preempted = 0;
  for (int i = 0; i < options.events; ++i) {
    if (options.event_gap_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(options.event_gap_us));
    }
    sim.Event(&inc);
    const double cpu_start = ThreadCpuMs();
    start = Clock::now();
    const Decision d = inc.Schedule(sim.now_ms());
    times.push_back(Ms(Clock::now() - start));
    cpu_times.push_back(ThreadCpuMs() - cpu_start);
    placed += d.placements.size();
    preempted += d.preemptions.size();
    sim.Apply(d);
  }

  const ClusterSnapshot final_state = sim.Snapshot();
  SchedulerOptions full_options = scheduler_options;
  full_options.max_jobs_examined = 0;
  auto full = lmtrain::scheduler::MakePolicyScheduler(full_options);
  start = Clock::now();
  const Decision reference = full->Schedule(final_state);
  const double full_ms = Ms(Clock::now() - start);

  const double p50 = Percentile(times, 0.50), p99 = Percentile(times, 0.99);
  const double max = *std::max_element(times.begin(), times.end());
  std::printf("events: %d decisions, %zu placed, %zu preempted; now %zu running, %zu queued\n",
              options.events, placed, preempted, sim.running(), sim.queued());
  std::printf(
      "decision (IncrementalScheduler::Schedule, max_jobs_examined %d): p50 %.3f ms, "
      "p99 %.3f ms, max %.3f ms\n",
      options.max_examined, p50, p99, max);
  std::printf("decision CPU time (this thread only): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              Percentile(cpu_times, 0.50), Percentile(cpu_times, 0.99),
              *std::max_element(cpu_times.begin(), cpu_times.end()));
  std::printf("full MakePolicyScheduler pass over the final state: %.1f ms (%zu placements)\n",
              full_ms, reference.placements.size());
  std::printf(
      "{\"workers\": %d, \"queued\": %d, \"events\": %d, \"p50_ms\": %.4f, "
      "\"p99_ms\": %.4f, \"max_ms\": %.4f, \"full_pass_ms\": %.1f, "
      "\"cpu_p99_ms\": %.4f, \"gpu_jobs_percent\": %d}\n",
      options.workers, options.queued, options.events, p50, p99, max, full_ms,
      Percentile(cpu_times, 0.99), options.gpu_jobs);
  return 0;
}
