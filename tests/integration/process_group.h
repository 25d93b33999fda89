// ProcessGroup: an lm-server and several lm-worker processes on loopback that a test can
// kill with SIGKILL and restart at will (the server on the same port and data dir, each
// worker with the same name and work dir), for the chaos test. Children's output is drained
// into files under dir()/logs so a chatty child never blocks on a full pipe.
// Not thread-safe: one test thread drives it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
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
  };

  explicit ProcessGroup(Options options);
  ~ProcessGroup();  // SIGKILLs everything still running, removes dir().

  // Starts the server (picking a free port the first time) and every worker.
  absl::Status StartAll();
  absl::Status StartServer();
  void KillServer();
  absl::Status StartWorker(int index);
  void KillWorker(int index);
  bool server_running() const { return server_proc_.child != nullptr; }
  bool worker_running(int index) const { return workers_.at(index).child != nullptr; }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::filesystem::path& dir() const { return dir_; }
  std::string artifacts_dir() const { return (dir_ / "data" / "artifacts").string(); }

 private:
  struct Proc {
    std::unique_ptr<ChildProcess> child;
    std::thread drain;
  };
  absl::Status Launch(Proc& proc, const std::vector<std::string>& argv, const std::string& log,
                      std::string* port_out);
  void Kill(Proc& proc);

  Options options_;
  std::filesystem::path dir_;
  int port_ = 0;
  PosixProcessLauncher launcher_;
  Proc server_proc_;
  std::vector<Proc> workers_;
};

}  // namespace lmtrain::testing
