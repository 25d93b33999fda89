// lm-bench-api: load generator for lm-server's JobService.
//   lm-bench-api --server HOST:PORT --op submit|get|list|watch|submit-to-running
//                --clients N --seconds S [--rate R] [--sync normal,full] [--fake-worker]
//                [--ceiling [--ceiling-api sync|callback]]
// N client threads, each with its own channel (own TCP connection), call one operation back to
// back for S seconds. The last line of output is JSON (see bench/api_load.h's ResultJson).
// --rate R: open loop instead (bench/open_loop.h): R calls per second in total at fixed
// intended start times, spread over the N clients; latency counts from each call's intended
// start, and the JSON line adds "offered_qps", "late_calls", "behind_ms" and "unsent_calls", so
// a server that cannot keep up shows as qps < offered_qps, not as a lower rate. With
// --ceiling, the do-nothing service gets the same rate.
// --sync MODE[,MODE...]: instead of --server, start an in-process lm-server (no worker, a
// temporary data dir) per mode with that store durability (lm-server --sync) and run the op
// against each in turn; one JSON line per mode, with a "sync" field, e.g. submit throughput
// with `--op submit --sync normal,full`.
// --fake-worker: also start, in-process, one worker with one slot that speaks the real
// WorkerService over gRPC on loopback but runs nothing (bench/fake_worker.h): it long-polls
// Sync and reports each assigned rank started at once. With --op submit-to-running this times
// the server alone: submit, the scheduling decision, the push into the parked Sync, the start
// report, the RUNNING event. The JSON line then has "worker": "fake". Implies an in-process
// server (--sync normal unless given).
// --ceiling: after the run, the same op with the same clients and seconds against an
// in-process do-nothing JobService answering with the real server's messages
// (bench/null_job_service.h); prints its JSON line ("service": "do-nothing"), then the real
// one with "ceiling_qps" and "ratio_to_ceiling" (real qps / do-nothing qps). Not with
// submit-to-running. --ceiling-api callback serves the do-nothing service on gRPC's callback
// API instead of the synchronous one lm-server uses (sync, the default).
// CPU per call: every JSON line has "bench_cpu_us_per_call", the user+system CPU of this
// process over the timed run divided by the calls (the clients; with the do-nothing service,
// which runs in this process, the clients and the service). --server-pid PID adds
// "server_cpu_us_per_call", the same for the lm-server process PID (on this machine).
// --slow-log-ms MS: after the run, one stderr line per call slower than MS with its wall-clock
// start time and client index (bench/api_load.h SlowCall), to tell a periodic stall from
// queueing.
//   submit             SubmitJob of a tiny valid clm job, a unique request id per call.
//   get                GetJob of finished jobs seeded first (--seed-jobs, submitted+cancelled).
//   list               ListJobs(page_size --list-limit, states --list-states, view
//                      --list-view) following next_page_token for --list-pages pages, then
//                      from the first page again.
//   prefill            No load: fills the store of --data-dir (or --store URI) with --prefill
//                      jobs (bench/job_prefill.h: 10% active; all QUEUED with
//                      --prefill-all-queued), each with the spec lm-server would store for
//                      the submit op's job file, for an lm-server to start on.
//   watch              WatchJob(after_seq=0) of a finished seeded job: the whole replay.
//   submit-to-running  Submit, then WatchJob until the job's RUNNING event arrives (the
//                      latency recorded); then cancel it (in case it still runs) and watch
//                      until it ends, so the next submit finds the worker idle again. Needs
//                      a worker (with a fake trainer: bench/fake_trainer.sh).
//   watch-fanout       --watchers N streams on one running job, then --events metric
//                      reports --interval-ms apart: each delivery's delay from the report
//                      (bench/watch_fanout_bench.h), on --watch-channels connections.
//                      Implies --fake-worker; ignores --clients.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "bench/api_load.h"
#include "bench/api_ops.h"
#include "bench/fake_worker.h"
#include "bench/job_prefill.h"
#include "bench/null_job_service.h"
#include "bench/open_loop.h"
#include "bench/watch_fanout_bench.h"
#include "common/command_line.h"
#include "common/job_spec.h"
#include "common/malloc_tuning.h"
#include "server/server.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain::bench {
namespace {
namespace fs = std::filesystem;

// User+system CPU seconds process `pid` ("self" for this one) has used (/proc/PID/stat), or -1.
double ProcessCpuSeconds(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: count from its end.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return -1;
  const std::vector<std::string> fields = absl::StrSplit(text.substr(close + 2), ' ');
  if (fields.size() < 13) return -1;  // fields[0] is field 3; utime is 14, stime 15.
  const double ticks = std::stod(fields[11]) + std::stod(fields[12]);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU microseconds per call between two ProcessCpuSeconds readings; -1 if either failed.
double CpuMicrosPerCall(double before, double after, int64_t calls) {
  if (before < 0 || after < 0 || calls <= 0) return -1;
  return std::round((after - before) * 1e6 / static_cast<double>(calls) * 10) / 10;
}

// One run's JSON line and what it counted.
struct LoadRun {
  nlohmann::json line;
  LoadResult load;
};

// The op's load on `factory`: closed loop, or open loop at f.rate when that is > 0.
LoadRun RunLoadUnmetered(const ApiBenchFlags& f, const OperationFactory& factory) {
  const int clients = static_cast<int>(f.clients);
  if (f.rate > 0) {
    OpenLoopResult r = RunOpenLoop(clients, f.seconds, f.rate, factory, f.slow_log_ms);
    return {nlohmann::json::parse(OpenLoopJson(f.op, r)), std::move(r.load)};
  }
  LoadResult r = RunClosedLoop(clients, f.seconds, factory, f.slow_log_ms);
  nlohmann::json line = nlohmann::json::parse(ResultJson(f.op, r));
  return {std::move(line), std::move(r)};
}

// RunLoadUnmetered, plus the CPU per call of this process and of f.server_pid (when > 0).
LoadRun RunLoad(const ApiBenchFlags& f, const OperationFactory& factory) {
  const std::string server_pid = f.server_pid > 0 ? absl::StrCat(f.server_pid) : "";
  const double self_before = ProcessCpuSeconds("self");
  const double server_before = server_pid.empty() ? -1 : ProcessCpuSeconds(server_pid);
  LoadRun run = RunLoadUnmetered(f, factory);
  const double self_after = ProcessCpuSeconds("self");
  const double server_after = server_pid.empty() ? -1 : ProcessCpuSeconds(server_pid);
  run.line["bench_cpu_us_per_call"] = CpuMicrosPerCall(self_before, self_after, run.load.calls);
  if (!server_pid.empty()) {
    run.line["server_cpu_us_per_call"] =
        CpuMicrosPerCall(server_before, server_after, run.load.calls);
  }
  return run;
}

// The op against a do-nothing JobService that answers with f.server's messages about ids[0].
absl::StatusOr<LoadRun> RunCeiling(ApiBenchFlags f, const JobFiles& files,
                                   const std::vector<std::string>& ids) {
  auto canned = CaptureReplies(*NewStub(f.server, -2), ids.empty() ? "" : ids.front(),
                               static_cast<int>(f.list_limit));
  if (!canned.ok()) return canned.status();
  auto ceiling = CeilingServer::Start(
      *std::move(canned), f.ceiling_api == "callback" ? CeilingApi::kCallback : CeilingApi::kSync);
  if (!ceiling.ok()) return ceiling.status();
  f.server = absl::StrCat("127.0.0.1:", (*ceiling)->port());
  f.server_pid = 0;  // The do-nothing service runs in this process.
  std::vector<std::string> ceiling_ids;
  auto factory = MakeFactory(f, &files, &ceiling_ids);
  if (!factory.ok()) return factory.status();
  return RunLoad(f, *factory);
}

int RunFanout(const ApiBenchFlags& f, const JobFiles& files, const std::string& sync_mode) {
  WatchFanoutOptions o;
  o.server = f.server;
  o.watchers = static_cast<int>(f.watchers);
  o.events = static_cast<int>(f.events);
  o.interval_ms = static_cast<int>(f.interval_ms);
  o.channels = static_cast<int>(f.watch_channels);
  o.job_yaml = files.yaml;
  o.job_base_dir = files.dir.string();
  nlohmann::json line = RunWatchFanout(o);
  fs::remove_all(files.dir);
  line["sync"] = sync_mode;
  line["worker"] = "fake";
  std::cout << line.dump() << std::endl;
  return line.contains("error") ? 1 : 0;
}

// Runs the op against f.server; prints its JSON line (with "sync": sync_mode unless empty).
int RunOnce(const ApiBenchFlags& f, const std::string& sync_mode) {
  const JobFiles files = MakeJobFiles();
  if (f.op == "watch-fanout") return RunFanout(f, files, sync_mode);
  std::vector<std::string> ids;
  auto factory = MakeFactory(f, &files, &ids);
  if (!factory.ok()) {
    std::cerr << "lm-bench-api: " << factory.status().message() << "\n";
    fs::remove_all(files.dir);
    return 2;
  }
  LoadRun run = RunLoad(f, *factory);
  const LoadResult& result = run.load;
  std::cerr << SlowCallLines(result);
  std::optional<absl::StatusOr<LoadRun>> ceiling;
  if (f.ceiling) ceiling = RunCeiling(f, files, ids);
  fs::remove_all(files.dir);
  if (!result.first_error.empty()) std::cerr << "first error: " << result.first_error << "\n";
  nlohmann::json& line = run.line;
  if (ceiling.has_value() && !ceiling->ok()) {
    std::cerr << "lm-bench-api: ceiling: " << ceiling->status().message() << "\n";
    return 1;
  }
  if (ceiling.has_value()) {
    const LoadResult& c_load = (*ceiling)->load;
    if (!c_load.slow.empty()) std::cerr << "do-nothing service:\n" << SlowCallLines(c_load);
    nlohmann::json& c = (*ceiling)->line;
    c["service"] = "do-nothing";
    std::cout << c.dump() << std::endl;
    line["ceiling_qps"] = c["qps"];
    const double ceiling_qps = c_load.Qps();
    line["ratio_to_ceiling"] =
        ceiling_qps > 0 ? std::round(result.Qps() / ceiling_qps * 1000) / 1000 : 0;
  }
  if (!sync_mode.empty()) line["sync"] = sync_mode;
  if (f.fake_worker) line["worker"] = "fake";
  std::cout << line.dump() << std::endl;
  return result.errors == 0 ? 0 : 1;
}

// Starts an in-process lm-server with --sync `mode` on a temporary data dir, runs the op
// against it, and removes the data dir.
int RunWithOwnServer(ApiBenchFlags f, const std::string& mode) {
  auto sync = SqliteJobStore::ParseSync(mode);
  if (!sync.ok()) {
    std::cerr << "lm-bench-api: " << sync.status().message() << "\n";
    return 2;
  }
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.sync = *sync;
  o.data_dir = (fs::temp_directory_path() / absl::StrCat("lm-bench-api-", ::getpid(), "-", mode))
                   .string();
  fs::create_directories(o.data_dir);
  auto server = Server::Start(o);
  if (!server.ok()) {
    std::cerr << "lm-bench-api: cannot start lm-server: " << server.status().message() << "\n";
    return 1;
  }
  f.server = absl::StrCat("127.0.0.1:", (*server)->port());
  std::unique_ptr<FakeWorker> worker;
  if (f.fake_worker) {
    worker = std::make_unique<FakeWorker>(f.server, 1);
    if (absl::Status s = worker->Start(); !s.ok()) {
      std::cerr << "lm-bench-api: fake worker: " << s.message() << "\n";
      (*server)->Shutdown();
      return 1;
    }
  }
  const int rc = RunOnce(f, mode);
  (*server)->Shutdown();
  if (worker != nullptr) worker->Stop();
  server->reset();
  fs::remove_all(o.data_dir);
  return rc;
}

// --op prefill: fills the store and prints {"op", "jobs", "queued", "running", "finished",
// "seconds"}.
int RunPrefill(const ApiBenchFlags& f) {
  if ((f.data_dir.empty() && f.store.empty()) || f.prefill < 1) {
    std::cerr << "lm-bench-api: --op prefill needs --prefill N >= 1 and --data-dir or --store\n";
    return 2;
  }
  PrefillOptions options;
  options.jobs = f.prefill;
  options.all_queued = f.prefill_all_queued;
  const JobFiles files = MakeJobFiles();
  // The spec as lm-server stores a submitted one: parsed, every default written out.
  ParseOptions parse;
  parse.base_dir = files.dir.string();
  parse.check_files = true;
  parse.scheduled = true;
  absl::StatusOr<JobSpec> spec = ParseJobSpec(files.yaml, parse);
  if (!spec.ok()) {
    std::cerr << "lm-bench-api: prefill: " << spec.status().message() << "\n";
    return 1;
  }
  options.spec_yaml = JobSpecToYaml(*spec);
  auto counts = PrefillStore(f.data_dir, f.store, options);
  fs::remove_all(files.dir);
  if (!counts.ok()) {
    std::cerr << "lm-bench-api: prefill: " << counts.status().message() << "\n";
    return 1;
  }
  std::cout << nlohmann::json{{"op", "prefill"},
                              {"jobs", f.prefill},
                              {"queued", counts->queued},
                              {"running", counts->running},
                              {"finished", counts->finished},
                              {"seconds", counts->seconds}}
                   .dump()
            << std::endl;
  return 0;
}

int Main(int argc, char** argv) {
  // As lm-server's main does: no lock-order graph behind every Mutex lock (Debian's abseil is
  // built without NDEBUG).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Also as lm-server's main does, for the in-process server of --sync runs.
  TuneMallocForServer();
  ApiBenchFlags f;
  CommandLine cl("lm-bench-api", "load generator for lm-server's JobService");
  cl.AddString("server", &f.server, "lm-server address HOST:PORT");
  cl.AddString("op", &f.op,
               "submit | get | list | watch | submit-to-running | watch-fanout | prefill");
  cl.AddInt("clients", &f.clients, "concurrent clients (threads, one channel each)");
  cl.AddDouble("seconds", &f.seconds, "timed duration");
  cl.AddDouble("rate", &f.rate,
               "open loop: calls per second in total at fixed start times (0: closed loop)");
  cl.AddInt("seed-jobs", &f.seed_jobs, "get/watch: finished jobs to create first");
  cl.AddInt("list-limit", &f.list_limit, "list: ListJobsRequest.page_size");
  cl.AddInt("list-pages", &f.list_pages, "list: pages each client follows before starting over");
  cl.AddString("list-states", &f.list_states, "list: states to filter on, e.g. QUEUED,RUNNING");
  cl.AddString("list-view", &f.list_view, "list: basic | full (ListJobsRequest.view)");
  cl.AddInt("prefill", &f.prefill, "prefill: jobs to create (10% active)");
  cl.AddBool("prefill-all-queued", &f.prefill_all_queued,
             "prefill: every job QUEUED (a deep queue) instead of 10% active");
  cl.AddString("data-dir", &f.data_dir, "prefill: the lm-server data dir to fill (SQLite)");
  cl.AddString("store", &f.store, "prefill: a postgres:// URI to fill instead");
  cl.AddString("sync", &f.sync,
               "normal,full: run against an in-process lm-server per --sync mode instead");
  cl.AddBool("fake-worker", &f.fake_worker,
             "start an in-process lm-server with one fake gRPC worker (see the file comment)");
  cl.AddBool("ceiling", &f.ceiling,
             "also run the op against a do-nothing JobService and print the ratio");
  cl.AddString("ceiling-api", &f.ceiling_api,
               "sync | callback: the gRPC API the do-nothing JobService answers on");
  cl.AddInt("watchers", &f.watchers, "watch-fanout: concurrent WatchJob streams");
  cl.AddInt("events", &f.events, "watch-fanout: metric events to deliver");
  cl.AddInt("interval-ms", &f.interval_ms, "watch-fanout: time between events");
  cl.AddInt("watch-channels", &f.watch_channels, "watch-fanout: connections the streams share");
  cl.AddInt("server-pid", &f.server_pid,
            "lm-server's process id: report its CPU per call (server_cpu_us_per_call)");
  cl.AddDouble("slow-log-ms", &f.slow_log_ms,
               "print to stderr the start time and client of each call slower than this");
  auto positional = cl.Parse(argc - 1, argv + 1);
  if (!positional.ok()) {
    std::cerr << positional.status().message() << "\n";
    return IsHelpRequest(positional.status()) ? 0 : 2;
  }
  if (f.op == "prefill") return RunPrefill(f);
  if (f.clients < 1 || f.seconds <= 0 || f.list_pages < 1) {
    std::cerr << "lm-bench-api: --clients must be >= 1 and --seconds > 0\n";
    return 2;
  }
  if (f.list_view != "basic" && f.list_view != "full") {
    std::cerr << "lm-bench-api: --list-view must be basic or full\n";
    return 2;
  }
  if (f.rate < 0 || (f.rate > 0 && f.op == "watch-fanout")) {
    std::cerr << "lm-bench-api: --rate must be >= 0, and does not apply to watch-fanout\n";
    return 2;
  }
  if (f.ceiling_api != "sync" && f.ceiling_api != "callback") {
    std::cerr << "lm-bench-api: --ceiling-api must be sync or callback\n";
    return 2;
  }
  if (f.ceiling && f.op == "submit-to-running") {
    std::cerr << "lm-bench-api: --ceiling does not apply to submit-to-running\n";
    return 2;
  }
  if (f.op == "watch-fanout") f.fake_worker = true;
  if (f.fake_worker && f.sync.empty()) f.sync = "normal";
  if (f.sync.empty()) return RunOnce(f, "");
  int rc = 0;
  for (absl::string_view mode : absl::StrSplit(f.sync, ',', absl::SkipEmpty())) {
    rc = std::max(rc, RunWithOwnServer(f, std::string(mode)));
  }
  return rc;
}

}  // namespace
}  // namespace lmtrain::bench

int main(int argc, char** argv) { return lmtrain::bench::Main(argc, argv); }
