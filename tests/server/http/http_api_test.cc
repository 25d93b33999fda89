// lm-server's HTTP front end (HttpServer + JsonApi) over a real socket, with an httplib client,
// against the real Dispatcher and JobManager on an in-memory store and a fake clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tests/server/http/http_api_fixture.h"

namespace lmtrain::testing {
namespace {
using nlohmann::json;
using ::testing::HasSubstr;

TEST_F(HttpApiTest, ListsJobsNewestFirstWithStateUserAndLimitFilters) {
  const std::string a = Submit("a", 0, "", "alice");
  const std::string b = Submit("b", 5, "", "bob");
  const std::string c = Submit("c", 0, "", "alice");
  json body;
  ASSERT_EQ(Get("/api/v1/jobs", &body), 200) << body;
  ASSERT_EQ(body["jobs"].size(), 3u);
  EXPECT_EQ(body["jobs"][0]["id"], c);
  EXPECT_EQ(body["jobs"][1]["priority"], 5);
  EXPECT_EQ(body["jobs"][2]["state"], "QUEUED");
  EXPECT_FALSE(body["jobs"][0].contains("spec_yaml"));

  ASSERT_EQ(Get("/api/v1/jobs?user=alice", &body), 200);
  ASSERT_EQ(body["jobs"].size(), 2u);
  EXPECT_EQ(body["jobs"][1]["id"], a);
  ASSERT_EQ(Get("/api/v1/jobs?state=queued,running&limit=1", &body), 200);
  ASSERT_EQ(body["jobs"].size(), 1u);
  ASSERT_EQ(Get("/api/v1/jobs?state=SUCCEEDED", &body), 200);
  EXPECT_TRUE(body["jobs"].empty());
  ASSERT_EQ(Get("/api/v1/jobs?user=bob&state=QUEUED", &body), 200);
  ASSERT_EQ(body["jobs"].size(), 1u);
  EXPECT_EQ(body["jobs"][0]["id"], b);
}

TEST_F(HttpApiTest, PagesFollowNextPageTokenAndRefuseATokenForOtherStates) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Submit("p" + std::to_string(i)));
  json body;
  std::vector<std::string> seen;
  std::string token;
  for (int page = 0; page < 5; ++page) {
    const std::string url =
        "/api/v1/jobs?state=QUEUED&page_size=2" + (token.empty() ? "" : "&page_token=" + token);
    ASSERT_EQ(Get(url, &body), 200) << body;
    for (const json& job : body["jobs"]) seen.push_back(job["id"]);
    token = body["next_page_token"].get<std::string>();
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, std::vector<std::string>(ids.rbegin(), ids.rend()));
  ASSERT_EQ(Get("/api/v1/jobs?page_size=2&limit=1", &body), 200);  // page_size wins.
  ASSERT_EQ(body["jobs"].size(), 2u);
  token = body["next_page_token"].get<std::string>();
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(Get("/api/v1/jobs?state=RUNNING&page_token=" + token, &body), 400);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("different filter"));
  EXPECT_EQ(Get("/api/v1/jobs?page_token=nonsense", &body), 400);
  EXPECT_EQ(Get("/api/v1/jobs?page_size=0", &body), 400);
}

// view=basic: each job as the full list shows it, less checkpoints and attempts (not fetched).
TEST_F(HttpApiTest, BasicViewListsJobsWithoutCheckpointsOrAttempts) {
  const std::string id = Submit("runs", 0, "", "bob");
  JobAssignment a;
  const std::string w = RunOnWorker(id, &a);
  TrainingMetrics m;
  m.step = 5;
  m.max_steps = 100;
  Report(w, a, {m, CheckpointRecord{5, "/artifacts/jobs/1/checkpoint-5", 0}});
  const std::string queued = Submit("waits", 0, "", "alice");
  json full, basic;
  ASSERT_EQ(Get("/api/v1/jobs", &full), 200) << full;
  ASSERT_EQ(Get("/api/v1/jobs?view=BASIC", &basic), 200) << basic;
  ASSERT_EQ(full["jobs"].size(), 2u);
  ASSERT_EQ(full["jobs"][1]["id"], id);
  EXPECT_EQ(full["jobs"][1]["attempts"][0]["worker_ids"][0], w);
  EXPECT_EQ(full["jobs"][1]["checkpoints"].size(), 1u);
  EXPECT_EQ(basic["jobs"][1]["metrics"]["step"], 5);
  EXPECT_EQ(basic["jobs"][0]["id"], queued);
  for (json& job : full["jobs"]) {
    job.erase("checkpoints");
    job.erase("attempts");
  }
  EXPECT_EQ(basic, full);
  ASSERT_EQ(Get("/api/v1/jobs?view=full&page_size=1", &full), 200) << full;
  EXPECT_TRUE(full["jobs"][0].contains("attempts"));
  ASSERT_EQ(Get("/api/v1/jobs?view=basic&page_size=1&page_token=" +
                    full["next_page_token"].get<std::string>(),
                &basic),
            200);
  ASSERT_EQ(basic["jobs"].size(), 1u);  // Tokens work across views.
  EXPECT_EQ(basic["jobs"][0]["id"], id);
  EXPECT_EQ(Get("/api/v1/jobs?view=short", &basic), 400);
  EXPECT_THAT(basic["error"].get<std::string>(), HasSubstr("'view' must be basic or full"));
}

TEST_F(HttpApiTest, BadQueryParametersAre400WithTheReason) {
  json body;
  EXPECT_EQ(Get("/api/v1/jobs?state=DONE", &body), 400);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("unknown state 'DONE'"));
  EXPECT_EQ(Get("/api/v1/jobs?limit=0", &body), 400);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("'limit' must be an integer in [1"));
  EXPECT_EQ(Get("/api/v1/jobs?limit=ten", &body), 400);
  EXPECT_EQ(Get("/api/v1/jobs?limit=99999999999999999999999", &body), 400);
  EXPECT_EQ(Get("/api/v1/jobs?colour=red", &body), 400);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("unknown query parameter 'colour'"));
  const std::string id = Submit("x");
  EXPECT_EQ(Get("/api/v1/jobs/" + id + "/events?after=-1", &body), 400);
}

TEST_F(HttpApiTest, GetJobHasSpecAndWaitingReasonUnknownIs404BadIdIs400) {
  const std::string id = Submit("first", 3);
  json body;
  ASSERT_EQ(Get("/api/v1/jobs/" + id, &body), 200) << body;
  EXPECT_EQ(body["name"], "first");
  EXPECT_EQ(body["priority"], 3);
  EXPECT_THAT(body["spec_yaml"].get<std::string>(), HasSubstr("task: clm"));
  EXPECT_TRUE(body.contains("waiting_reason"));

  EXPECT_EQ(Get("/api/v1/jobs/999", &body), 404);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("999"));
  EXPECT_EQ(Get("/api/v1/jobs/abc", &body), 400);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("job id must be a decimal number"));
  EXPECT_EQ(Get("/api/v1/jobs/" + std::string(30, '9'), &body), 404);  // Overflows int64.
  EXPECT_EQ(Get("/api/v1/jobs/" + std::string(5000, '7'), &body), 400);
  EXPECT_EQ(Get("/api/v1/jobs/-1", &body), 400);
  EXPECT_EQ(Get("/api/v1/jobs/1%00", &body), 400);
}

TEST_F(HttpApiTest, HostilePathsNeverReachTheFileSystem) {
  json body;
  for (const std::string path :
       {"/api/v1/jobs/../../etc/passwd", "/api/v1/jobs/..%2F..%2Fetc%2Fpasswd",
        "/assets/../../../etc/passwd", "/assets/..%2F..%2Fetc%2Fpasswd", "/etc/passwd",
        "/assets/%2Fetc%2Fpasswd", "/api/v1/jobs/1/../../../etc/passwd"}) {
    const int status = Get(path, &body);
    EXPECT_TRUE(status == 404 || status == 400) << path << " -> " << status;
    EXPECT_THAT(last_.body, ::testing::Not(HasSubstr("root:"))) << path;
    EXPECT_TRUE(body.is_object() && body.contains("error")) << path << ": " << last_.body;
  }
}

TEST_F(HttpApiTest, MetricsHistoryHasEveryReportedPointWithTimeAndContinuesAfterSeq) {
  const std::string id = Submit("train");
  JobAssignment a;
  const std::string w = RunOnWorker(id, &a);
  TrainingMetrics m1;
  m1.step = 5;
  m1.max_steps = 100;
  m1.loss = 4.5;
  m1.learning_rate = 1e-3;
  m1.tokens_per_second = 1200;
  Report(w, a, {m1});
  clock_.Advance(1000);
  TrainingMetrics m2;
  m2.step = 10;
  m2.loss = 3.25;
  m2.eval_loss = 3.5;
  m2.eval_metrics = {{"eval_accuracy", 0.25}};
  m2.num_input_tokens_seen = 5120;
  Report(w, a, {m2, LogEvent{"stdout", "step 10\n"}});

  json body;
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/metrics", &body), 200) << body;
  ASSERT_EQ(body["points"].size(), 2u) << body;
  EXPECT_EQ(body["points"][0]["step"], 5);
  EXPECT_EQ(body["points"][0]["loss"], 4.5);
  EXPECT_EQ(body["points"][0]["learning_rate"], 1e-3);
  EXPECT_EQ(body["points"][0]["tokens_per_second"], 1200);
  EXPECT_EQ(body["points"][1]["eval_metrics"]["eval_accuracy"], 0.25);
  EXPECT_EQ(
      body["points"][1]["time_ms"].get<int64_t>() - body["points"][0]["time_ms"].get<int64_t>(),
      1000);
  EXPECT_FALSE(body["more"]);
  const int64_t next = body["next_after"];
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/metrics?after=" + std::to_string(next), &body), 200);
  EXPECT_TRUE(body["points"].empty());

  // The job's latest metrics, progress and the worker it runs on.
  ASSERT_EQ(Get("/api/v1/jobs/" + id, &body), 200);
  EXPECT_EQ(body["state"], "RUNNING");
  EXPECT_EQ(body["metrics"]["step"], 10);
  EXPECT_EQ(body["metrics"]["max_steps"], 100);
  EXPECT_EQ(body["metrics"]["num_input_tokens_seen"], 5120);  // A JSON number, as step.
  EXPECT_EQ(body["attempts"][0]["worker_ids"][0], w);
}

TEST_F(HttpApiTest, EventsPageByAfterAndLogsCarryTheirStream) {
  const std::string id = Submit("logs");
  JobAssignment a;
  const std::string w = RunOnWorker(id, &a);
  Report(w, a,
         {LogEvent{"stdout", "hello\n"}, LogEvent{"stderr", "bad \xff byte\n"},
          CheckpointRecord{30, "/artifacts/jobs/1/checkpoint-30", 0}});
  json body;
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/events?limit=2", &body), 200) << last_.body;
  ASSERT_EQ(body["events"].size(), 2u);
  EXPECT_EQ(body["events"][0]["type"], "state");
  EXPECT_EQ(body["events"][0]["state"], "QUEUED");
  const int64_t next = body["next_after"];
  EXPECT_EQ(next, body["events"][1]["seq"]);
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/events?after=" + std::to_string(next), &body), 200);
  bool saw_checkpoint = false;
  for (const json& e : body["events"]) {
    EXPECT_GT(e["seq"].get<int64_t>(), next);
    if (e["type"] == "checkpoint") saw_checkpoint = e["step"] == 30;
  }
  EXPECT_TRUE(saw_checkpoint) << body;

  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/logs", &body), 200) << last_.body;
  ASSERT_GE(body["lines"].size(), 2u);  // The server's own lines (placement) come first.
  const size_t n = body["lines"].size();
  EXPECT_EQ(body["lines"][n - 2]["stream"], "stdout");
  EXPECT_EQ(body["lines"][n - 2]["text"], "hello\n");
  EXPECT_EQ(body["lines"][n - 1]["stream"], "stderr");
  // Invalid UTF-8 in a log line still gives valid JSON (the byte becomes U+FFFD).
  EXPECT_EQ(body["lines"][n - 1]["text"], "bad \xef\xbf\xbd byte\n");
  for (const json& line : body["lines"]) EXPECT_FALSE(line.contains("type"));
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/logs?limit=1", &body), 200);
  EXPECT_EQ(body["lines"].size(), 1u);
  EXPECT_TRUE(body["more"]);
}

TEST_F(HttpApiTest, CancelNeedsJsonAndIs409OnceTerminal) {
  const std::string id = Submit("c");
  json body;
  EXPECT_EQ(Cancel(id, "", &body, "", "text/plain"), 415);
  EXPECT_EQ(Cancel(id, "not json", &body), 400);
  EXPECT_EQ(Cancel(id, R"({"reason": 5})", &body), 400);
  ASSERT_EQ(Cancel(id, R"({"reason": "enough"})", &body), 200) << body;
  EXPECT_EQ(body["state"], "CANCELLED");
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_EQ(Cancel(id, "{}", &body), 409);
  EXPECT_THAT(body["error"].get<std::string>(), ::testing::Not(::testing::IsEmpty()));
  EXPECT_EQ(Cancel("424242", "{}", &body), 404);
  EXPECT_EQ(Cancel("x1", "{}", &body), 400);
  ASSERT_EQ(Get("/api/v1/jobs/" + id + "/events", &body), 200);
  EXPECT_EQ(body["events"].back()["reason"], "enough");
}

TEST_F(HttpApiTest, CancelOfARunningJobStopsItsRanksFirst) {
  const std::string id = Submit("r");
  JobAssignment a;
  const std::string w = RunOnWorker(id, &a);
  json body;
  ASSERT_EQ(Cancel(id, "{}", &body), 200) << body;
  EXPECT_EQ(body["state"], "RUNNING");  // Until the worker reports the rank stopped.
  EXPECT_THAT(Stops(Sync(w, {Ref(a)})), ::testing::ElementsAre(id + "/0/1"));
  ASSERT_TRUE(Exit(w, a, -1, /*cancelled=*/true, 15).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
}

TEST_F(HttpApiTest, WorkersShowSlotsUsageLabelsAndRunningJobs) {
  const std::string id = Submit("busy");
  JobAssignment a;
  const std::string w = RunOnWorker(id, &a);
  json body;
  ASSERT_EQ(Get("/api/v1/workers", &body), 200) << body;
  ASSERT_EQ(body["workers"].size(), 1u);
  const json& worker = body["workers"][0];
  EXPECT_EQ(worker["id"], w);
  EXPECT_EQ(worker["name"], "gpu-box");
  EXPECT_EQ(worker["slots"], 2);
  EXPECT_EQ(worker["used_slots"], 1);
  EXPECT_EQ(worker["labels"]["gpu"], "h100");
  EXPECT_EQ(worker["running_job_ids"][0], id);
  EXPECT_GT(worker["last_seen_ms"].get<int64_t>(), 0);
}

TEST_F(HttpApiTest, AuthenticationFailureIs401AndUsersSeeOnlyTheirJobs) {
  StartHttp(FakeAuth);
  const std::string mine = Submit("mine", 0, "", "alice");
  const std::string theirs = Submit("theirs", 0, "", "bob");
  json body;
  EXPECT_EQ(Get("/api/v1/jobs", &body), 401);
  EXPECT_EQ(last_.get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("missing bearer token"));
  EXPECT_EQ(Get("/api/v1/jobs", &body, "mallory"), 401);

  ASSERT_EQ(Get("/api/v1/jobs", &body, "alice"), 200);
  ASSERT_EQ(body["jobs"].size(), 1u);
  EXPECT_EQ(body["jobs"][0]["id"], mine);
  ASSERT_EQ(Get("/api/v1/jobs?user=bob", &body, "alice"), 200);
  EXPECT_TRUE(body["jobs"].empty());
  EXPECT_EQ(Get("/api/v1/jobs/" + theirs, &body, "alice"), 403);
  EXPECT_EQ(Get("/api/v1/jobs/" + theirs + "/metrics", &body, "alice"), 403);
  EXPECT_EQ(Get("/api/v1/jobs/" + theirs + "/logs", &body, "alice"), 403);
  EXPECT_EQ(Cancel(theirs, "{}", &body, "alice"), 403);
  EXPECT_EQ(Cancel(theirs, "{}", &body), 401);
  EXPECT_EQ(State(theirs), JobState::kQueued);
  EXPECT_EQ(Get("/api/v1/workers", &body, "alice"), 403);
  EXPECT_EQ(Get("/api/v1/jobs", &body, "w1"), 200);
  EXPECT_TRUE(body["jobs"].empty());  // Workers see no user jobs.

  ASSERT_EQ(Get("/api/v1/jobs", &body, "root"), 200);
  EXPECT_EQ(body["jobs"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/workers", &body, "root"), 200);
  EXPECT_EQ(Cancel(mine, "{}", &body, "alice"), 200);
  // The dashboard itself, health and metrics need no token.
  EXPECT_EQ(client_->Get("/")->status, 200);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  EXPECT_EQ(client_->Get("/metrics")->status, 200);
}

TEST_F(HttpApiTest, JobsAndWorkersShowGpus) {
  const std::string id = Submit("gpu", 0, "gpus_per_worker: 2");
  WorkerInfo info;
  info.name = "box";
  info.hostname = "box.host";
  info.slots = 4;
  info.devices = {{"cpu", 0, "8 cores", 0, ""},
                  {"cuda", 0, "NVIDIA H100", 80LL << 30, "GPU-a"},
                  {"cuda", 1, "NVIDIA H100", 80LL << 30, "GPU-b"},
                  {"cuda", 2, "NVIDIA H100", 80LL << 30, "GPU-c"}};
  const std::string w = dispatcher_->RegisterWorker(info, {});
  ASSERT_EQ(Sync(w).assignments.size(), 2u);
  json body;
  ASSERT_EQ(Get("/api/v1/jobs/" + id, &body), 200);
  EXPECT_EQ(body["resources"]["gpus_per_worker"], 2);
  EXPECT_EQ(body["attempts"][0]["rank_gpus"], json::parse("[[0], [1]]"));
  ASSERT_EQ(Get("/api/v1/workers", &body), 200);
  ASSERT_EQ(body["workers"].size(), 1u);
  EXPECT_EQ(body["workers"][0]["used_gpus"], 2);
  EXPECT_EQ(body["workers"][0]["devices"][3]["uuid"], "GPU-c");
  EXPECT_EQ(body["workers"][0]["devices"][3]["memory_bytes"], 80LL << 30);
}

TEST_F(HttpApiTest, HealthReadinessAndUnknownEndpoints) {
  auto res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client_->Get("/readyz");
  EXPECT_EQ(res->status, 200);
  ready_ = absl::UnavailableError("store closed");
  res = client_->Get("/readyz");
  EXPECT_EQ(res->status, 503);
  EXPECT_THAT(res->body, HasSubstr("store closed"));
  json body;
  EXPECT_EQ(Get("/api/v2/jobs", &body), 404);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("no such endpoint"));
  res = client_->Delete("/api/v1/jobs/1");
  EXPECT_EQ(res->status, 404);
}

TEST_F(HttpApiTest, ServesTheEmbeddedDashboardWithAStrictContentSecurityPolicy) {
  auto res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(res->body, HasSubstr("/assets/app.js"));
  EXPECT_THAT(res->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'self'"));
  for (const std::string name : {"app.js", "charts.js", "style.css"}) {
    res = client_->Get("/assets/" + name);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << name;
    EXPECT_GT(res->body.size(), 500u) << name;
  }
  EXPECT_THAT(client_->Get("/assets/app.js")->get_header_value("Content-Type"),
              HasSubstr("javascript"));
  EXPECT_EQ(client_->Get("/assets/missing.js")->status, 404);
  // Nothing in the dashboard loads from the network.
  for (const std::string name : {"index.html", "app.js", "charts.js", "style.css"}) {
    const std::string body = client_->Get(name == "index.html" ? "/" : "/assets/" + name)->body;
    EXPECT_THAT(body, ::testing::Not(HasSubstr("https://"))) << name;
    EXPECT_THAT(body, ::testing::Not(HasSubstr("//cdn"))) << name;
  }
}

TEST_F(HttpApiTest, PrometheusMetricsShowQueueRunningAndWorkerThroughput) {
  const std::string run = Submit("run", 9);
  JobAssignment a;
  const std::string w = RunOnWorker(run, &a);
  // They stay QUEUED: no worker matches (a submit is placed at once where one does).
  Submit("q1", 0, "selector: {gpu: a100}");
  Submit("q2", 7, "selector: {gpu: a100}");
  TrainingMetrics m;
  m.tokens_per_second = 2048;
  Report(w, a, {m});
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kPrometheusContentType);
  EXPECT_THAT(res->body, HasSubstr("lmtrain_queued_jobs{priority=\"0\"} 1\n"));
  EXPECT_THAT(res->body, HasSubstr("lmtrain_queued_jobs{priority=\"7\"} 1\n"));
  EXPECT_THAT(res->body, HasSubstr("lmtrain_running_jobs{state=\"RUNNING\"} 1\n"));
  EXPECT_THAT(res->body, HasSubstr("lmtrain_worker_tokens_per_second{worker=\"" + w +
                                   "\",name=\"gpu-box\"} 2048\n"));
  EXPECT_THAT(res->body,
              HasSubstr("lmtrain_worker_used_slots{worker=\"" + w + "\",name=\"gpu-box\"} 1\n"));
}

class HttpServerStart : public DispatcherFixture {};

TEST_F(HttpServerStart, RefusesATakenPortAndMalformedAddresses) {
  JobManager& manager = *manager_;
  Dispatcher& dispatcher = *dispatcher_;
  HttpServer::Options o;
  o.listen = "127.0.0.1:0";
  auto first = HttpServer::Start(o, &manager, &dispatcher, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  o.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HttpServer::Start(o, &manager, &dispatcher, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("cannot listen for HTTP on " + o.listen));
  for (const std::string bad : {"8080", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000", ":80"}) {
    o.listen = bad;
    auto s = HttpServer::Start(o, &manager, &dispatcher, nullptr);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  (*first)->Stop();
  (*first)->Stop();  // Twice is fine.
}

}  // namespace
}  // namespace lmtrain::testing
