// Server (lm-server in-process) with HTTP on: the options' defaults, port 0, the start-up
// error for a taken port, and /metrics fed by the gRPC interceptor and the job store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>

#include "client/job_client.h"
#include "client/job_format.h"
#include "server/server.h"
#include "tests/server/server_test_util.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ServerHttpTest : public ::testing::Test {
 protected:
  ServerHttpTest()
      : dir_(fs::temp_directory_path() /
             ("lmtrain-http-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {}
  ~ServerHttpTest() override { fs::remove_all(dir_); }

  absl::StatusOr<std::unique_ptr<Server>> StartServer(const std::string& http_listen,
                                                      const std::string& name) {
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.http_listen = http_listen;
    o.data_dir = (dir_ / name).string();
    return Server::Start(o);
  }

  static inline int counter_ = 0;
  fs::path dir_;
};

TEST_F(ServerHttpTest, NoHttpUnlessAsked) {
  EXPECT_TRUE(Server::Options{}.http_listen.empty());
  auto server = StartServer("", "a");
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->http_port(), 0);
}

TEST_F(ServerHttpTest, PortZeroPicksAFreePortAndATakenPortIsAStartError) {
  auto server = StartServer("127.0.0.1:0", "a");
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->http_port();
  ASSERT_GT(port, 0);
  httplib::Client http("127.0.0.1", port);
  auto res = http.Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;

  auto second = StartServer("127.0.0.1:" + std::to_string(port), "b");
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("cannot listen for HTTP on 127.0.0.1:" + std::to_string(port)));

  (*server)->Shutdown();
  EXPECT_FALSE(http.Get("/healthz"));  // HTTP stops with the server.
}

TEST_F(ServerHttpTest, MetricsCountGrpcRequestsAndJobOutcomes) {
  auto server = StartServer("127.0.0.1:0", "a");
  ASSERT_TRUE(server.ok()) << server.status();
  JobClient client("127.0.0.1:" + std::to_string((*server)->port()));
  JobFolder folder("m");
  std::ofstream(folder.dir() / "job.yaml") << folder.Request().spec_yaml;
  auto id = client.Submit((folder.dir() / "job.yaml").string(), "");
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(client.Cancel(*id).ok());
  EXPECT_FALSE(client.Get("12345").ok());  // NOT_FOUND.

  httplib::Client http("127.0.0.1", (*server)->http_port());
  auto res = http.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::string& text = res->body;
  EXPECT_THAT(text, HasSubstr("lmtrain_grpc_requests_total{method=\"/lmtrain.v1.JobService/"
                              "SubmitJob\",code=\"OK\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("lmtrain_grpc_requests_total{method=\"/lmtrain.v1.JobService/"
                              "GetJob\",code=\"NOT_FOUND\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("lmtrain_grpc_request_duration_seconds_count{method=\"/"
                              "lmtrain.v1.JobService/CancelJob\",code=\"OK\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("lmtrain_job_duration_seconds_count{state=\"CANCELLED\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE lmtrain_job_scheduling_latency_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("lmtrain_running_jobs{state=\"RUNNING\"} 0\n"));

  // The HTTP API sees the same job.
  res = http.Get("/api/v1/jobs/" + *id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("\"state\":\"CANCELLED\""));
}

// One JSON shape for a job: GET /api/v1/jobs/ID is what `lmctl get -o json` prints, and each
// entry of GET /api/v1/jobs what `lmctl list -o json` prints (proto/job_json.h).
TEST_F(ServerHttpTest, HttpApiAndLmctlShowAJobInOneShape) {
  auto server = StartServer("127.0.0.1:0", "a");
  ASSERT_TRUE(server.ok()) << server.status();
  JobClient client("127.0.0.1:" + std::to_string((*server)->port()));
  JobFolder folder("shape");
  std::ofstream(folder.dir() / "job.yaml") << folder.Request().spec_yaml;
  auto id = client.Submit((folder.dir() / "job.yaml").string(), "");
  ASSERT_TRUE(id.ok()) << id.status();
  httplib::Client http("127.0.0.1", (*server)->http_port());

  auto one = http.Get("/api/v1/jobs/" + *id);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  auto job = client.Get(*id);
  ASSERT_TRUE(job.ok()) << job.status();
  const nlohmann::json from_http = nlohmann::json::parse(one->body);
  EXPECT_EQ(from_http, JobToJson(*job, /*with_spec=*/true));
  EXPECT_EQ(from_http["state"], "QUEUED");
  EXPECT_TRUE(from_http["created_at"].is_string());  // RFC 3339, as lmctl prints it.
  EXPECT_TRUE(from_http["started_at"].is_null());
  EXPECT_TRUE(from_http.contains("waiting_reason"));

  auto list = http.Get("/api/v1/jobs");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body;
  auto jobs = client.List(10);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(list->body)["jobs"][0], JobToJson(jobs->at(0)));
}

}  // namespace
}  // namespace lmtrain::testing
