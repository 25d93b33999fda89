// A real lm-server process keeps the threads that answer its synchronous calls under a steady
// load of concurrent clients (server/sync_server_threads.h), rather than starting and ending
// one for nearly every call as gRPC's default limit of 2 idle threads makes it do.
//
// The test lists lm-server's tasks named grpcpp_sync_ser (gRPC's synchronous-server threads)
// from /proc again and again while 16 clients make ListJobs calls, and counts the distinct
// thread ids it saw. Threads that are kept show up once each; with the churn, each call that
// finds no idle thread starts one, and the listing sees hundreds of short-lived ids.
#include "server/sync_server_threads.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lmtrain/v1/jobs.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

constexpr int kClients = 16;
constexpr int kCallsPerClient = 300;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Adds the ids of `pid`'s tasks named grpcpp_sync_ser (the name is cut to 15 characters).
void AddSyncServerThreads(int pid, std::set<std::string>* seen) {
  std::error_code ec;
  for (const auto& task :
       fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec)) {
    if (ReadFile(task.path() / "comm") == "grpcpp_sync_ser\n") {
      seen->insert(task.path().filename().string());
    }
  }
}

TEST(SyncServerThreadsTest, ConcurrentCallsReuseTheServersThreads) {
  auto cluster = Cluster::Start(0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int pid = (*cluster)->server_pid();
  std::atomic<int> failed{0};
  std::atomic<int> running{kClients};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      // A channel each, as separate client processes would have.
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      auto stub = v1::JobService::NewStub(grpc::CreateCustomChannel(
          (*cluster)->address(), grpc::InsecureChannelCredentials(), args));
      for (int i = 0; i < kCallsPerClient; ++i) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::ListJobsRequest req;
        v1::ListJobsResponse resp;
        if (!stub->ListJobs(&ctx, req, &resp).ok()) ++failed;
      }
      --running;
    });
  }
  std::set<std::string> seen;
  while (running.load() > 0) AddSyncServerThreads(pid, &seen);
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failed.load(), 0);
  std::cout << seen.size() << " distinct grpcpp_sync_ser threads seen\n";
  ASSERT_FALSE(seen.empty()) << "no grpcpp_sync_ser task of lm-server was seen";
  // Kept threads: at most one per client calling at once, plus those waiting for the next call.
  EXPECT_LE(seen.size(), static_cast<size_t>(kClients + kMaxIdleSyncServerThreads / 4))
      << kClients * kCallsPerClient << " calls from " << kClients
      << " clients were answered by this many distinct threads: lm-server starts and ends "
         "threads for its calls";
}

}  // namespace
}  // namespace lmtrain::testing
