// lm-bench-store: job store write throughput from N threads at once, without gRPC in the way.
//   lm-bench-store [--op create|append] [--threads N] [--jobs M] [--dir DIR | --store URI]
// create: M CreateJob calls (what group commit buys). append: one RUNNING job per thread, then
// M AppendEvents calls in all, each one TrainingMetrics event (a worker's metrics report).
// The store: SqliteJobStore (WAL, synchronous=NORMAL) on a fresh file in DIR (emptied first),
// or PostgresJobStore on the database URI names (postgres://...; jobs are added to it).
// Prints one JSON line: {"op","threads","calls","calls_per_s","cpu_us_per_call",
// "p50_ms","p99_ms","errors"} (cpu: this process's, not a PostgreSQL server's).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/command_line.h"
#include "common/status_macros.h"
#include "storage/postgres_job_store.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain {
namespace {

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

NewJob BenchJob(int64_t thread, int64_t k) {
  NewJob job;
  job.name = "bench";
  job.task = "clm";
  job.spec_yaml = std::string(400, 'y');  // About a normalised tiny job spec.
  job.request_id = absl::StrCat(thread, "-", k);
  job.created_at_ms = 1;
  return job;
}

absl::StatusOr<std::unique_ptr<JobStore>> OpenStore(const std::string& uri,
                                                    const std::string& dir) {
  if (!uri.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<PostgresJobStore> store, PostgresJobStore::Open({uri}));
    return store;
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SqliteJobStore::Options options;
  options.path = dir + "/lm.db";
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteJobStore> store, SqliteJobStore::Open(options));
  return store;
}

// One RUNNING job for each thread of the append op.
absl::StatusOr<std::vector<std::string>> RunningJobs(JobStore& store, int64_t n) {
  std::vector<std::string> ids;
  for (int64_t t = 0; t < n; ++t) {
    NewJob job = BenchJob(t, -1);
    job.request_id.clear();
    ASSIGN_OR_RETURN(std::string id, store.CreateJob(job));
    JobTransition scheduled;
    scheduled.to = JobState::kScheduled;
    JobTransition running;
    running.to = JobState::kRunning;
    RETURN_IF_ERROR(store.TransitionJobThrough(id, {scheduled, running}).status());
    ids.push_back(id);
  }
  return ids;
}

int Main(int argc, char** argv) {
  int64_t threads = 16, jobs = 4000;
  std::string op = "create", uri;
  std::string dir = (std::filesystem::temp_directory_path() / "lm-bench-store").string();
  CommandLine cl("lm-bench-store", "job store write throughput from N threads");
  cl.AddString("op", &op, "create | append");
  cl.AddInt("threads", &threads, "concurrent callers");
  cl.AddInt("jobs", &jobs, "calls in all (CreateJob or AppendEvents)");
  cl.AddString("dir", &dir, "SQLite: scratch folder (emptied first)");
  cl.AddString("store", &uri, "a postgres:// URI instead of SQLite in --dir");
  auto positional = cl.Parse(argc - 1, argv + 1);
  if (!positional.ok() || threads < 1 || jobs < threads || (op != "create" && op != "append")) {
    std::cerr << (positional.ok() ? "need --op create|append, --threads >= 1, --jobs >= threads"
                                  : std::string(positional.status().message()))
              << "\n";
    return 2;
  }
  auto store = OpenStore(uri, dir);
  if (!store.ok()) {
    std::cerr << store.status() << "\n";
    return 1;
  }
  std::vector<std::string> running;
  if (op == "append") {
    auto ids = RunningJobs(**store, threads);
    if (!ids.ok()) {
      std::cerr << ids.status() << "\n";
      return 1;
    }
    running = *std::move(ids);
  }
  // Call k of thread t.
  std::function<absl::Status(int64_t, int64_t)> call = [&](int64_t t, int64_t k) {
    if (op == "create") return (*store)->CreateJob(BenchJob(t, k)).status();
    TrainingMetrics metrics;
    metrics.step = k + 1;
    metrics.loss = 3.0 / (k + 1);
    metrics.learning_rate = 5e-5;
    return (*store)->AppendEvents(running[t], k + 1, {metrics}).status();
  };
  const int64_t per_thread = jobs / threads;
  std::vector<std::vector<double>> latency_ms(threads);
  std::vector<int64_t> failed(threads);
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int64_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      latency_ms[t].reserve(per_thread);
      for (int64_t k = 0; k < per_thread; ++k) {
        const auto start = std::chrono::steady_clock::now();
        failed[t] += !call(t, k).ok();
        latency_ms[t].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  int64_t errors = 0;
  for (int64_t t = 0; t < threads; ++t) {
    all.insert(all.end(), latency_ms[t].begin(), latency_ms[t].end());
    errors += failed[t];
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all[std::min(all.size() - 1, size_t(p * all.size()))]; };
  const int64_t done = per_thread * threads;
  nlohmann::json j = {{"op", op},
                      {"threads", threads},
                      {"calls", done},
                      {"calls_per_s", std::round(done / wall)},
                      {"cpu_us_per_call", std::round((CpuSeconds() - cpu0) * 1e6 / done)},
                      {"p50_ms", std::round(pct(0.5) * 1000) / 1000},
                      {"p99_ms", std::round(pct(0.99) * 1000) / 1000},
                      {"errors", errors}};
  std::cout << j.dump() << std::endl;
  if (uri.empty()) std::filesystem::remove_all(dir);
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) { return lmtrain::Main(argc, argv); }
