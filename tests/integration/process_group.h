// ProcessGroup: an lm-server (or several replicas on one PostgreSQL store) and several
// lm-worker processes on loopback that a test can kill with SIGKILL and restart at will (a
// server on the same port and data dir, each worker with the same name and work dir), for the
// chaos tests. Replicas share one artifacts folder; workers get every replica's address. Children's output is drained
// into files under dir()/logs, each line stamped with its arrival time, so a chatty child
// never blocks on a full pipe.
// Not thread-safe: one test thread drives it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/process_launcher.h"

namespace lmtrain::testing {

class ProcessGroup {
 public:
  struct Options {
    int workers = 3;
    int slots_per_worker = 1;
    int64_t lease_timeout_ms = 5000;
    // Extra lm-worker flags by worker index, e.g. {"--gpus", "0,1", "--trainer", PATH}.
    std::vector<std::vector<std::string>> worker_args;
    // Extra lm-server flags, e.g. {"--sync", "full"}.
    std::vector<std::string> server_args;
    int servers = 1;  // > 1: replicas; server_args must name a shared --store.
  };

  explicit ProcessGroup(Options options);
  ~ProcessGroup();  // SIGKILLs everything still running, removes dir().

  // Starts the server (picking a free port the first time) and every worker.
  absl::Status StartAll();
  absl::Status StartServer(int index = 0);
  void KillServer(int index = 0);
  // Waits until the server exits by itself, at most `timeout` (then SIGKILLs it), and returns
  // how it ended.
  ExitStatus WaitServer(int index, absl::Duration timeout);
  absl::Status StartWorker(int index);
  void KillWorker(int index);
  bool server_running(int index = 0) const { return servers_.at(index).child != nullptr; }
  bool worker_running(int index) const { return workers_.at(index).child != nullptr; }

  // Every server's address, comma-separated (what lm-worker --server takes).
  std::string address() const;
  std::string server_address(int index) const {
    return "127.0.0.1:" + std::to_string(ports_.at(index));
  }
  // The server's HTTP port (the dashboard); it changes with each start.
  int http_port(int index) const { return http_ports_.at(index); }
  const std::filesystem::path& dir() const { return dir_; }
  // When the first line of dir()/logs/`log` ("server.log", "server-1.log", "worker-0.log")
  // that contains `text` and arrived at or after `after` arrived; nullopt if none has.
  std::optional<absl::Time> LogTime(const std::string& log, absl::string_view text,
                                    absl::Time after) const;
  // The last `lines` lines of dir()/logs/`log`, each with its arrival stamp ("" if none).
  std::string LogTail(const std::string& log, int lines) const;
  std::string artifacts_dir() const { return (dir_ / "data" / "artifacts").string(); }

 private:
  struct Proc {
    std::unique_ptr<ChildProcess> child;
    std::thread drain;
  };
  // For a server, reads its gRPC and HTTP ports from its output into *port_out, *http_port_out.
  absl::Status Launch(Proc& proc, const std::vector<std::string>& argv, const std::string& log,
                      std::string* port_out, std::string* http_port_out);
  void Kill(Proc& proc);

  Options options_;
  std::filesystem::path dir_;
  std::vector<int> ports_;  // 0 until the server first started.
  std::vector<int> http_ports_;
  PosixProcessLauncher launcher_;
  std::vector<Proc> servers_;
  std::vector<Proc> workers_;
};

}  // namespace lmtrain::testing
