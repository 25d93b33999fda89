// lm-bench-store: CreateJob throughput of SqliteJobStore (WAL, synchronous=NORMAL) on a fresh
// file, from N threads at once: shows what group commit buys without gRPC in the way.
//   lm-bench-store [--threads N] [--jobs M] [--dir DIR]
// Prints one JSON line: {"threads","jobs","creates_per_s","cpu_us_per_create"}.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/command_line.h"
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

int Main(int argc, char** argv) {
  int64_t threads = 16, jobs = 4000;
  std::string dir = (std::filesystem::temp_directory_path() / "lm-bench-store").string();
  CommandLine cl("lm-bench-store", "SqliteJobStore::CreateJob throughput from N threads");
  cl.AddInt("threads", &threads, "concurrent callers");
  cl.AddInt("jobs", &jobs, "jobs created in all");
  cl.AddString("dir", &dir, "scratch folder (emptied first)");
  auto positional = cl.Parse(argc - 1, argv + 1);
  if (!positional.ok() || threads < 1 || jobs < threads) {
    std::cerr << (positional.ok() ? "need --threads >= 1, --jobs >= threads"
                                  : std::string(positional.status().message()))
              << "\n";
    return 2;
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SqliteJobStore::Options options;
  options.path = dir + "/lm.db";
  auto store = SqliteJobStore::Open(options);
  if (!store.ok()) {
    std::cerr << store.status() << "\n";
    return 1;
  }
  const int64_t per_thread = jobs / threads;
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  int64_t errors = 0;
  std::vector<int64_t> failed(threads);
  for (int64_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t k = 0; k < per_thread; ++k)
        failed[t] += !(*store)->CreateJob(BenchJob(t, k)).ok();
    });
  }
  for (std::thread& w : workers) w.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int64_t f : failed) errors += f;
  const int64_t done = per_thread * threads;
  nlohmann::json j = {{"threads", threads},
                      {"jobs", done},
                      {"creates_per_s", std::round(done / wall)},
                      {"cpu_us_per_create", std::round((CpuSeconds() - cpu0) * 1e6 / done)},
                      {"errors", errors}};
  std::cout << j.dump() << std::endl;
  std::filesystem::remove_all(dir);
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) { return lmtrain::Main(argc, argv); }
