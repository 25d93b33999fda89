// Cluster: real lm-server and lm-worker processes on loopback ephemeral ports with a temp
// data dir, for end-to-end tests. Destruction stops both (SIGTERM, then SIGKILL).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process_launcher.h"
#include "tests/test_paths.h"

namespace lmtrain::testing {

inline std::string BinDir() { return std::string(LMTRAIN_BINARY_DIR) + "/bin"; }
inline std::string SourceDir() { return LMTRAIN_SOURCE_DIR; }

class Cluster {
 public:
  // Starts lm-server (and, if worker_slots > 0, one lm-worker with that many slots).
  // `server_args` are appended to lm-server's command line.
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(
      int worker_slots, double kill_grace_s = 2.0,
      const std::vector<std::string>& server_args = {});
  ~Cluster();

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // lm-server's HTTP front end (dashboard, JSON API), on its own ephemeral port.
  int http_port() const { return http_port_; }
  const std::filesystem::path& dir() const { return dir_; }
  int server_pid() const { return server_->pid(); }  // lm-server's process id.
  // Starts an lm-worker (work dir dir()/worker) when the cluster has none yet.
  absl::Status AddWorker(int slots, double kill_grace_s = 2.0);
  // Runs lmctl with args against this cluster; returns exit code, fills stdout/stderr.
  int Lmctl(const std::vector<std::string>& args, std::string* out, std::string* err);

 private:
  Cluster() = default;
  std::filesystem::path dir_;
  int port_ = 0;
  int http_port_ = 0;
  PosixProcessLauncher launcher_;
  std::unique_ptr<ChildProcess> server_;
  std::unique_ptr<ChildProcess> worker_;
};

// Reads all of fd until EOF.
std::string ReadAll(int fd);

}  // namespace lmtrain::testing
