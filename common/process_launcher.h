// ProcessLauncher: the seam through which the worker agent starts lm-train children.
//
// PosixProcessLauncher forks and execs the child in its own process group, with stdout and
// stderr on pipes and a third pipe on the child's fd 3 for trainer events
// (common/trainer_events.h). The child gets SIGKILL if the agent dies (PR_SET_PDEATHSIG), so
// no orphan trainers outlive their worker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] is the executable's path.
  std::string cwd;                // Empty: inherit.
  // Added to the agent's environment, replacing the agent's value of the same name.
  std::vector<std::pair<std::string, std::string>> env;
};

struct ExitStatus {
  int exit_code = 0;  // -1 when killed by a signal.
  int signal = 0;
};

// A running child. Owns the read ends of its pipes (closed on destruction).
// Thread-safety: Signal() may be called from any thread; the fds and Wait() belong to one
// watcher thread.
class ChildProcess {
 public:
  virtual ~ChildProcess() = default;
  virtual int pid() const = 0;
  virtual int stdout_fd() const = 0;
  virtual int stderr_fd() const = 0;
  virtual int events_fd() const = 0;  // Child's fd 3.
  // Sends `sig` to the child's whole process group; no-op once reaped.
  virtual void Signal(int sig) = 0;
  // Blocks until the child exits and reaps it.
  virtual ExitStatus Wait() = 0;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // InvalidArgument/NotFound when the executable cannot be started (exec failure included).
  virtual absl::StatusOr<std::unique_ptr<ChildProcess>> Launch(const LaunchSpec& spec) = 0;
};

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  absl::StatusOr<std::unique_ptr<ChildProcess>> Launch(const LaunchSpec& spec) override;
};

}  // namespace lmtrain
