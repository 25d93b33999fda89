// lm-server: the lmtrain control plane (gRPC API, scheduler, SQLite store).
//   lm-server --listen HOST:PORT --data-dir DIR [--artifacts DIR] [--local-worker N]
//             [--scheduler-config FILE] (see server/scheduler_config.h)
//             [--http-listen HOST:PORT] (dashboard, JSON API, /metrics; docs/dashboard.md)
#include <iostream>

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
  o.http_listen = "127.0.0.1:8080";
  int64_t local_workers = 0, lease_ms = o.lease_timeout_ms;
  std::string scheduler_config;
  CommandLine cl("lm-server", "the lmtrain control plane");
  cl.AddString("listen", &o.listen, "gRPC address HOST:PORT (port 0: any free port)");
  cl.AddString("data-dir", &o.data_dir, "folder for lm.db and artifacts");
  cl.AddString("artifacts", &o.artifacts_dir, "artifacts folder (default DATA_DIR/artifacts)");
  cl.AddInt("local-worker", &local_workers, "run an embedded worker with N slots");
  cl.AddString("trainer", &o.trainer_path, "lm-train path for the embedded worker");
  cl.AddInt("lease-timeout-ms", &lease_ms, "worker heartbeat timeout");
  cl.AddString("http-listen", &o.http_listen,
               "dashboard, JSON API and /metrics HOST:PORT (port 0: any free port; '': off)");
  cl.AddString("scheduler-config", &scheduler_config,
               "YAML: user weights and limits, backfill, preemption, seed");
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  o.local_worker_slots = static_cast<int>(local_workers);
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
  if (s->http_port() != 0) {
    const std::string& h = o.http_listen;
    std::cout << "lm-server: dashboard at http://" << h.substr(0, h.rfind(':')) << ":"
              << s->http_port() << "/" << std::endl;
  }
  term.WaitForNotification();
  std::cout << "lm-server: shutting down" << std::endl;
  s->Shutdown();
  return 0;
}
