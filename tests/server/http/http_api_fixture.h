// HttpApiTest: lm-server's HTTP front end (HttpServer + JsonApi) on a real socket, with an
// httplib client, over the real Dispatcher and JobManager on an in-memory store and a fake
// clock (tests/server/dispatcher_fixture.h).
#pragma once

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/http/http_server.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain::testing {

// Tokens of the fake authenticator: "Bearer alice"/"Bearer bob" are users, "Bearer root" an
// admin, "Bearer w1" a worker; anything else (or nothing) fails.
inline absl::StatusOr<Principal> FakeAuth(const std::string& header) {
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return absl::UnauthenticatedError("missing bearer token");
  const std::string token = header.substr(prefix.size());
  if (token == "alice" || token == "bob") return Principal{token, Role::kUser, true};
  if (token == "root") return Principal{"root", Role::kAdmin, true};
  if (token == "w1") return Principal{"w1", Role::kWorker, true};
  return absl::UnauthenticatedError("unknown token");
}

class HttpApiTest : public DispatcherFixture {
 protected:
  void StartHttp(HttpAuthenticator auth = nullptr) {
    HttpServer::Options o;
    o.listen = "127.0.0.1:0";
    o.authenticate = std::move(auth);
    o.ready = [this] { return ready_; };
    auto server = HttpServer::Start(o, manager_.get(), dispatcher_.get(), &metrics_);
    ASSERT_TRUE(server.ok()) << server.status();
    http_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
  }
  void SetUp() override { StartHttp(); }
  void TearDown() override { http_.reset(); }

  // GET `path`; returns the status and fills *body with the parsed JSON (null if not JSON).
  int Get(const std::string& path, nlohmann::json* body, const std::string& token = "") {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client_->Get(path, headers);
    EXPECT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    if (!res) return -1;
    *body = nlohmann::json::parse(res->body, nullptr, false);
    last_ = *res;
    return res->status;
  }
  int Cancel(const std::string& id, const std::string& body, nlohmann::json* out,
             const std::string& token = "", const std::string& type = "application/json") {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client_->Post("/api/v1/jobs/" + id + "/cancel", headers, body, type);
    EXPECT_TRUE(res);
    if (!res) return -1;
    *out = nlohmann::json::parse(res->body, nullptr, false);
    return res->status;
  }
  // Places `id` on a fresh worker and starts its rank; returns the worker id.
  std::string RunOnWorker(const std::string& id, JobAssignment* assignment) {
    const std::string w = Worker("gpu-box", 2, {{"gpu", "h100"}});
    SyncResult r = Sync(w);
    EXPECT_EQ(r.assignments.size(), 1u);
    *assignment = r.assignments.at(0);
    EXPECT_EQ(assignment->job_id, id);
    Start(w, *assignment);
    return w;
  }
  void Report(const std::string& worker, const JobAssignment& a, std::vector<WorkerReport> r) {
    auto s = dispatcher_->ReportEvents(worker, Ref(a), r);
    ASSERT_TRUE(s.ok()) << s.status();
  }

  ServerMetrics metrics_;
  absl::Status ready_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<httplib::Client> client_;
  httplib::Response last_;
};

}  // namespace lmtrain::testing
