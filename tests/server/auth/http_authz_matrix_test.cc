// The HTTP authorization matrix: a real lm-server with a tokens file and its HTTP front end;
// EVERY route the front end registered (HttpServer::routes(), so routes added later are
// covered without editing this file) x {anonymous, other user, owner, worker, admin}, called
// over a real socket with the caller's bearer token.
//
// Expectations come from the rules, not from copying the table:
//   - a public route (dashboard, health, metrics) serves everyone, token or not;
//   - every authenticated route: anonymous -> 401;
//   - a route naming a job (a path capture under /api/v1/jobs/): another user and a worker
//     -> 403; the owner and an admin get past authorization (anything but 401/403);
//   - an authenticated route naming no job must have a row in kCollectionRoutes (who may
//     call it), else the test fails.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "client/job_client.h"
#include "tests/server/auth/secure_server.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

using testing::TempDir;

using testing::CallerCase;
using testing::kCallers;
using testing::Who;

constexpr char kJobCapture[] = "/api/v1/jobs/([^/]+)";

// Authenticated routes that name no job: which authenticated callers get past authorization.
struct CollectionRoute {
  const char* method;
  const char* pattern;
  bool users;    // Users (their own jobs only, for the job list).
  bool workers;
};
const CollectionRoute kCollectionRoutes[] = {
    {"GET", "/api/v1/jobs", true, true},  // Filtered to the caller's jobs (workers: none).
    {"GET", "/api/v1/replica", true, true},
    {"GET", "/api/v1/workers", false, false},
};

enum class Outcome { kServed, kUnauthenticated, kForbidden };

const char* Name(Outcome o) {
  switch (o) {
    case Outcome::kServed: return "served (not 401/403)";
    case Outcome::kUnauthenticated: return "401";
    case Outcome::kForbidden: return "403";
  }
  return "?";
}

Outcome OutcomeOf(int status) {
  if (status == 401) return Outcome::kUnauthenticated;
  if (status == 403) return Outcome::kForbidden;
  return Outcome::kServed;
}

const CollectionRoute* FindCollectionRoute(const HttpRoute& route) {
  for (const CollectionRoute& c : kCollectionRoutes) {
    if (route.method == c.method && route.pattern == c.pattern) return &c;
  }
  return nullptr;
}

bool NamesAJob(const HttpRoute& route) { return route.pattern.rfind(kJobCapture, 0) == 0; }

// What `who` must get from `route`; false in *known when the test has no rule for the route.
Outcome Expected(const HttpRoute& route, Who who, bool* known) {
  *known = true;
  if (!route.authenticated) return Outcome::kServed;
  if (who == Who::kAnonymous) return Outcome::kUnauthenticated;
  if (who == Who::kAdmin) return Outcome::kServed;
  if (NamesAJob(route)) {
    return who == Who::kOwner ? Outcome::kServed : Outcome::kForbidden;
  }
  const CollectionRoute* c = FindCollectionRoute(route);
  if (c == nullptr) {
    *known = false;
    return Outcome::kForbidden;
  }
  const bool allowed = who == Who::kWorker ? c->workers : c->users;
  return allowed ? Outcome::kServed : Outcome::kForbidden;
}

// A concrete path for `pattern`: the job capture becomes `job_id`, any other capture an
// embedded dashboard file.
std::string PathFor(const std::string& pattern, const std::string& job_id) {
  return absl::StrReplaceAll(pattern, {{"([^/]+)", job_id}, {"(.+)", "app.js"}});
}

class HttpAuthzMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.http_listen = "127.0.0.1:0";
    o.data_dir = (dir_.path() / "data").string();
    o.auth_tokens_file = dir_.Write("tokens.yaml", testing::TokensYaml());
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    const SubmitRequest r = job_.Request();
    std::ofstream(job_.dir() / "job.yaml") << r.spec_yaml;
    JobClient alice(testing::TokenChannel(server_->port(), testing::kAliceToken));
    auto id = alice.Submit((job_.dir() / "job.yaml").string(), "");
    ASSERT_TRUE(id.ok()) << id.status();
    alice_job_ = *id;
  }

  // The route's status for `caller`; POSTs send an empty JSON object.
  int Call(const HttpRoute& route, const CallerCase& caller) {
    httplib::Client client("127.0.0.1", server_->http_port());
    httplib::Headers headers;
    if (caller.token[0] != '\0') headers.emplace("Authorization", std::string("Bearer ") +
                                                                      caller.token);
    const std::string path = PathFor(route.pattern, alice_job_);
    auto res = route.method == "POST" ? client.Post(path, headers, "{}", "application/json")
                                      : client.Get(path, headers);
    EXPECT_TRUE(res) << route.method << " " << path << ": " << httplib::to_string(res.error());
    return res ? res->status : -1;
  }

  TempDir dir_{"http-authz"};
  testing::JobFolder job_;
  std::unique_ptr<Server> server_;
  std::string alice_job_;
};

TEST_F(HttpAuthzMatrixTest, EveryRouteAnswersEveryCallerByTheRules) {
  const std::vector<HttpRoute> routes = server_->http_routes();
  ASSERT_GE(routes.size(), 12u) << "the HTTP route table looks incomplete";
  // Cancels run last: an owner's or admin's cancel must not change what the others see first.
  std::vector<HttpRoute> ordered = routes;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const HttpRoute& r) { return r.method != "POST"; });
  for (const HttpRoute& route : ordered) {
    for (const CallerCase& caller : kCallers) {
      bool known = true;
      const Outcome want = Expected(route, caller.who, &known);
      ASSERT_TRUE(known) << route.method << " " << route.pattern
                         << " names no job and has no row in kCollectionRoutes: say who may "
                            "call it";
      const int status = Call(route, caller);
      EXPECT_EQ(Name(OutcomeOf(status)), std::string(Name(want)))
          << route.method << " " << route.pattern << " as " << caller.name << ": HTTP "
          << status;
    }
  }
}

TEST_F(HttpAuthzMatrixTest, EveryCollectionRowIsARealRoute) {
  const std::vector<HttpRoute> routes = server_->http_routes();
  for (const CollectionRoute& c : kCollectionRoutes) {
    const bool found = std::any_of(routes.begin(), routes.end(), [&c](const HttpRoute& r) {
      return r.method == c.method && r.pattern == c.pattern && r.authenticated;
    });
    EXPECT_TRUE(found) << c.method << " " << c.pattern << " is not an authenticated route";
  }
}

TEST_F(HttpAuthzMatrixTest, EveryApiRouteIsAuthenticated) {
  for (const HttpRoute& route : server_->http_routes()) {
    if (route.pattern.rfind("/api/", 0) == 0) {
      EXPECT_TRUE(route.authenticated) << route.method << " " << route.pattern;
    }
  }
}

}  // namespace
}  // namespace lmtrain
