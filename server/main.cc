// lm-server: the lmtrain control plane (gRPC API, scheduler, SQLite store).
//   lm-server --listen HOST:PORT --data-dir DIR [--artifacts DIR] [--local-worker N]
//             [--scheduler-config FILE] (see server/scheduler_config.h)
//             [--data-roots DIR,...] [--max-artifact-bytes N] [--artifact-quota-bytes N]
#include <filesystem>
#include <iostream>

#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "common/termination_signals.h"
#include "server/server.h"

int main(int argc, char** argv) {
  using namespace lmtrain;
  // First, before any thread exists, so every thread inherits the blocked signals.
  absl::Notification term;
  WatchTerminationSignals([&term](int) {
    if (!term.HasBeenNotified()) term.Notify();
  });
  Server::Options o;
  int64_t local_workers = 0, lease_ms = o.lease_timeout_ms;
  std::string scheduler_config, data_roots;
  CommandLine cl("lm-server", "the lmtrain control plane");
  cl.AddString("listen", &o.listen, "gRPC address HOST:PORT (port 0: any free port)");
  cl.AddString("data-dir", &o.data_dir, "folder for lm.db and artifacts");
  cl.AddString("artifacts", &o.artifacts_dir, "artifacts folder (default DATA_DIR/artifacts)");
  cl.AddInt("local-worker", &local_workers, "run an embedded worker with N slots");
  cl.AddString("trainer", &o.trainer_path, "lm-train path for the embedded worker");
  cl.AddInt("lease-timeout-ms", &lease_ms, "worker heartbeat timeout");
  cl.AddString("scheduler-config", &scheduler_config,
               "YAML: user weights and limits, backfill, preemption, seed");
  cl.AddString("data-roots", &data_roots,
               "DIR,...: jobs may only read local data/model/tokenizer paths under these");
  cl.AddInt("max-artifact-bytes", &o.max_artifact_bytes, "largest file lmctl may upload");
  cl.AddInt("artifact-quota-bytes", &o.artifact_quota_bytes,
            "bytes of uploads charged to one user (0: unlimited)");
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  o.local_worker_slots = static_cast<int>(local_workers);
  for (absl::string_view root : absl::StrSplit(data_roots, ',', absl::SkipEmpty())) {
    o.data_roots.push_back(std::filesystem::absolute(std::string(root)).string());
  }
  o.lease_timeout_ms = lease_ms;
  if (!scheduler_config.empty()) {
    auto config = LoadSchedulerConfig(scheduler_config);
    if (!config.ok()) {
      std::cerr << "lm-server: " << config.status().message() << "\n";
      return 2;
    }
    o.scheduler = *config;
  }
  auto server = Server::Start(o);
  if (!server.ok()) {
    std::cerr << "lm-server: " << server.status().message() << "\n";
    return 1;
  }
  Server* s = server->get();
  std::cout << "lm-server: listening on " << o.listen.substr(0, o.listen.rfind(':')) << ":"
            << s->port() << ", data in " << s->options().data_dir << std::endl;
  term.WaitForNotification();
  std::cout << "lm-server: shutting down" << std::endl;
  s->Shutdown();
  return 0;
}
