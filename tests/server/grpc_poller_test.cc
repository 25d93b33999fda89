// A real lm-server process answers calls while gRPC's callback-API threads sleep
// (server/grpc_poller.h).
//
// In a gRPC server with a callback method (WatchJob), gRPC 1.51 runs "nexting_thread"s that
// wait at most 1 s for a callback event and then sleep 100 ms; with no WatchJob traffic they
// all sleep together. Unless another thread polls the server's sockets meanwhile, a call that
// arrives then waits until one wakes. The test waits, by reading /proc, until every
// nexting_thread of lm-server sleeps in clock_nanosleep, makes a ListJobs call from this
// process, and checks that each of them is still in that same sleep when the answer has come:
// still in clock_nanosleep with the same count of voluntary context switches (a thread that
// woke up and slept again would have switched at least once more). The client must be another
// process: in one process, the client's own polling would read the server's sockets too.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "lmtrain/v1/jobs.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tasks of `pid` named nexting_thread.
std::vector<std::string> NextingThreads(int pid) {
  std::vector<std::string> tids;
  std::error_code ec;
  for (const auto& task :
       fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec)) {
    if (ReadFile(task.path() / "comm") == "nexting_thread\n") tids.push_back(task.path().string());
  }
  return tids;
}

// Per task folder: its voluntary context switches, when every task is in clock_nanosleep now.
std::optional<std::map<std::string, std::string>> AllAsleep(const std::vector<std::string>& tasks) {
  std::map<std::string, std::string> switches;
  for (const std::string& task : tasks) {
    const std::string syscall = ReadFile(fs::path(task) / "syscall");
    if (syscall.rfind(std::to_string(SYS_clock_nanosleep) + " ", 0) != 0) return std::nullopt;
    const std::string status = ReadFile(fs::path(task) / "status");
    const size_t at = status.find("voluntary_ctxt_switches:");
    if (at == std::string::npos) return std::nullopt;
    switches[task] = status.substr(at, status.find('\n', at) - at);
  }
  return switches;
}

TEST(GrpcPollerTest, CallsAreAnsweredWhileTheCallbackThreadsSleep) {
  auto cluster = Cluster::Start(0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int pid = (*cluster)->server_pid();
  auto stub = v1::JobService::NewStub(
      grpc::CreateChannel((*cluster)->address(), grpc::InsecureChannelCredentials()));
  auto list = [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListJobsRequest req;
    v1::ListJobsResponse resp;
    return stub->ListJobs(&ctx, req, &resp);
  };
  ASSERT_TRUE(list().ok());  // Connected.
  const std::vector<std::string> tasks = NextingThreads(pid);
  if (tasks.empty()) GTEST_SKIP() << "this gRPC runs the callback API without nexting threads";
  if (ReadFile(fs::path(tasks[0]) / "syscall").empty()) {
    GTEST_SKIP() << "cannot read " << tasks[0] << "/syscall (ptrace permission)";
  }
  // Each sleep lasts 100 ms and a call takes about 1 ms; a few sleeps (1.1 s apart) leave room
  // for a loaded machine to delay one call past the end of a sleep.
  int sleeps = 0;
  int answered_asleep = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (sleeps < 5 && answered_asleep == 0 && absl::Now() < deadline) {
    std::optional<std::map<std::string, std::string>> before = AllAsleep(tasks);
    if (!before.has_value()) {
      absl::SleepFor(absl::Microseconds(200));  // Polling /proc for the condition.
      continue;
    }
    ++sleeps;
    ASSERT_TRUE(list().ok());
    answered_asleep += AllAsleep(tasks) == before;
    while (AllAsleep(tasks).has_value() && absl::Now() < deadline) {  // Out of this sleep.
      absl::SleepFor(absl::Microseconds(200));
    }
  }
  ASSERT_GT(sleeps, 0) << "the nexting threads never slept together within 30 s";
  EXPECT_GT(answered_asleep, 0) << "each of " << sleeps
                                << " calls made while every nexting thread slept was answered "
                                   "only after one woke: nothing else polls the sockets";
}

}  // namespace
}  // namespace lmtrain::testing
