// The JSON job list against each job's own JSON, cold and from its cache, and the HTTP
// connections' socket options.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/server/http/http_api_fixture.h"

namespace lmtrain::testing {
namespace {
using nlohmann::json;

// Each job of a list page as GET /api/v1/jobs/ID shows it, without what the list leaves out.
json AsListed(json job, bool basic) {
  job.erase("spec_yaml");
  if (basic) {
    job.erase("checkpoints");
    job.erase("attempts");
  }
  return job;
}

TEST_F(HttpApiTest, ListedJobsAreAsTheyAreNowOnEveryCall) {
  JobAssignment a;
  const std::string run = Submit("run", 1, "", "alice");
  const std::string w = RunOnWorker(run, &a);
  TrainingMetrics m;
  m.step = 3;
  m.loss = 2.5;
  Report(w, a, {m});
  const std::string done = Submit("done");
  json body;
  ASSERT_EQ(Cancel(done, "{}", &body), 200) << body;
  const std::string queued = Submit("queued", 0, "slots_per_worker: 4");
  for (const bool basic : {false, true}) {
    const std::string path = basic ? "/api/v1/jobs?view=basic" : "/api/v1/jobs";
    for (int call = 0; call < 2; ++call) {  // Made, then from the list's cache.
      ASSERT_EQ(Get(path, &body), 200) << body;
      ASSERT_EQ(body["jobs"].size(), 3u) << body;
      for (const json& listed : body["jobs"]) {
        json job;
        ASSERT_EQ(Get("/api/v1/jobs/" + listed["id"].get<std::string>(), &job), 200);
        EXPECT_EQ(listed, AsListed(job, basic)) << path << " call " << call;
      }
      ASSERT_EQ(Get(path, &body), 200);
      // Exactly one reason a job: the cached text holds none of its own.
      size_t reasons = 0;
      for (size_t at = 0; (at = last_.body.find("\"waiting_reason\"", at)) != std::string::npos;
           ++at) {
        ++reasons;
      }
      EXPECT_EQ(reasons, 3u) << last_.body;
    }
  }
  EXPECT_FALSE(body["jobs"][0]["waiting_reason"].get<std::string>().empty());

  // The running job changes: its next listing shows the new metrics, not the cached ones.
  m.step = 4;
  Report(w, a, {m});
  // The queued job's reason changes without the job changing: a worker too small for it joins.
  const std::string before = dispatcher_->WaitingReason(queued);
  Worker("cpu-box", 3);
  const std::string after = dispatcher_->WaitingReason(queued);
  ASSERT_NE(before, after);
  ASSERT_EQ(Get("/api/v1/jobs?view=basic", &body), 200);
  EXPECT_EQ(body["jobs"][0]["waiting_reason"], after);
  EXPECT_EQ(body["jobs"][2]["metrics"]["step"], 4);
  ASSERT_EQ(Get("/api/v1/jobs", &body), 200);
  EXPECT_EQ(body["jobs"][2]["metrics"]["step"], 4);
  EXPECT_EQ(body["jobs"][0]["waiting_reason"], after);
}

// The TCP port a socket of this process is bound to (local) or connected to (peer); 0 if none.
int PortOf(int fd, bool peer) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return rc == 0 && addr.sin_family == AF_INET ? ntohs(addr.sin_port) : 0;
}

TEST_F(HttpApiTest, ResponsesAreNotHeldBackByNaglesAlgorithm) {
  // A response is written as headers, then body: under Nagle's algorithm the body waits for
  // the client's (delayed, 40 ms) ACK of the headers on every call of a kept-alive connection.
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(http_->port());
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(write(client, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  char buf[256];
  ASSERT_GT(read(client, buf, sizeof buf), 0);  // Answered: the server's end is accepted.
  // The server's end of this connection, among this process's descriptors.
  int accepted = -1;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    if (fd != client && PortOf(fd, false) == http_->port() &&
        PortOf(fd, true) == PortOf(client, false)) {
      accepted = fd;
    }
  }
  ASSERT_GE(accepted, 0) << "no accepted socket for the client's port " << PortOf(client, false);
  int nodelay = 0;
  socklen_t len = sizeof nodelay;
  ASSERT_EQ(getsockopt(accepted, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_NE(nodelay, 0);
  close(client);
}

}  // namespace
}  // namespace lmtrain::testing
