// Test helper: runs the real lm-train binary as a child process, with its events on a pipe
// and its stdout / stderr in files. Used by lm_train_test and distributed_train_test.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/trainer_events.h"
#include "tests/test_paths.h"

extern char** environ;

namespace lmtrain {
namespace testing_child {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline const std::string kBinary = std::string(LMTRAIN_BINARY_DIR) + "/bin/lm-train";
inline const std::string kData = std::string(LMTRAIN_SOURCE_DIR) + "/examples/data/";

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A running lm-train with its events pipe; stdout and stderr go to files in `dir`, the
// output folder is `output_dir` (default dir/out). `env`: "NAME=value" entries added to
// this process's environment for the child.
class Child {
 public:
  Child(const fs::path& dir, const fs::path& job, std::vector<std::string> extra = {},
        std::vector<std::string> env = {}, fs::path output_dir = {}) {
    if (output_dir.empty()) output_dir = dir / "out";
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    events_ = fds[0];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 3);  // dup2 clears close-on-exec.
    const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = {
        kBinary,       job.string(), "--output-dir", output_dir.string(),
        "--events-fd", "3",          "--threads",    "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);  // Later entries lose.
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, kBinary.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
  }
  ~Child() {
    close(events_);
    if (pid_ > 0) {  // Test failed midway: do not leave it running.
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Next event line, or nullopt at EOF (the child exited) or after `timeout`.
  std::optional<TrainerEvent> NextEvent(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        auto event = DecodeTrainerEvent(buffer_.substr(0, newline));
        EXPECT_TRUE(event.ok()) << buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        if (event.ok()) return *event;
        continue;
      }
      if (!Fill(deadline)) return std::nullopt;
    }
  }

  // Waits for EOF on the events pipe (the child's exit) within `timeout`; true if seen.
  bool WaitForEof(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Fill(deadline)) {
    }
    return eof_;
  }

  // Exit code (128 + signal when killed).
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid() const { return pid_; }

 private:
  // Reads more into buffer_; false at EOF or deadline.
  bool Fill(Clock::time_point deadline) {
    if (eof_) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{events_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[4096];
    const ssize_t n = read(events_, chunk, sizeof(chunk));
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buffer_.append(chunk, n);
    return true;
  }

  pid_t pid_ = -1;
  int events_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

}  // namespace testing_child
}  // namespace lmtrain
