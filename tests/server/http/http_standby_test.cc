// A standby replica's HTTP front end (HttpServer::Options::active_replica): reads served
// locally, writes and the workers list redirected with 307 to the active replica's same path,
// 503 when no active replica is known. Two real HttpServers on loopback over one Dispatcher and
// store (the replicas' shared database), and an httplib client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"
#include "server/http/http_server.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain::testing {
namespace {
using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kActiveHeader[] = "X-Lmtrain-Active-Replica";

// "Bearer alice" is a user; anything else fails.
absl::StatusOr<Principal> AliceOnly(const std::string& header) {
  if (header == "Bearer alice") return Principal{"alice", Role::kUser, true};
  return absl::UnauthenticatedError("unknown token");
}

class HttpStandbyTest : public DispatcherFixture {
 protected:
  void SetUp() override {
    active_ = StartServer(nullptr, false);
    active_url_ = "http://127.0.0.1:" + std::to_string(active_->port());
    SetTarget(active_url_);
    standby_ = StartServer(nullptr, true);
  }

  std::unique_ptr<HttpServer> StartServer(HttpAuthenticator auth, bool standby) {
    HttpServer::Options o;
    o.listen = "127.0.0.1:0";
    o.authenticate = std::move(auth);
    if (standby) {
      o.active_replica = [this]() -> std::optional<std::string> {
        absl::MutexLock lock(&mu_);
        return target_;
      };
    }
    auto server = HttpServer::Start(o, manager_.get(), dispatcher_.get(), nullptr);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }
  void SetTarget(const std::string& url) {
    absl::MutexLock lock(&mu_);
    target_ = url;
  }
  static httplib::Result PostCancel(httplib::Client& client, const std::string& id,
                                    const std::string& token = "") {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Post("/api/v1/jobs/" + id + "/cancel?from=test", headers,
                       R"({"reason": "via the standby"})", "application/json");
  }

  absl::Mutex mu_;
  std::optional<std::string> target_ ABSL_GUARDED_BY(mu_);
  std::string active_url_;
  std::unique_ptr<HttpServer> active_;
  std::unique_ptr<HttpServer> standby_;
};

TEST_F(HttpStandbyTest, ReadsAreServedAndNameTheActiveReplica) {
  const std::string id = Submit("a");
  httplib::Client client("127.0.0.1", standby_->port());
  auto res = client.Get("/api/v1/jobs/" + id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["id"], id);
  EXPECT_EQ(res->get_header_value(kActiveHeader), active_url_);
  res = client.Get("/api/v1/replica");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body), (json{{"role", "standby"}, {"active", active_url_}}));

  httplib::Client to_active("127.0.0.1", active_->port());
  res = to_active.Get("/api/v1/jobs/" + id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->has_header(kActiveHeader));
  res = to_active.Get("/api/v1/replica");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body), (json{{"role", "active"}}));
}

TEST_F(HttpStandbyTest, AWriteIsRedirectedWith307ToTheSamePathOnTheActiveReplica) {
  const std::string id = Submit("a");
  httplib::Client client("127.0.0.1", standby_->port());
  auto res = PostCancel(client, id);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 307) << res->body;
  EXPECT_EQ(res->get_header_value("Location"),
            active_url_ + "/api/v1/jobs/" + id + "/cancel?from=test");
  const json body = json::parse(res->body);
  EXPECT_EQ(body["active"], active_url_);
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("standby"));
  EXPECT_EQ(State(id), JobState::kQueued);  // Nothing ran on the standby.

  client.set_follow_location(true);  // 307 keeps the method and the body.
  res = PostCancel(client, id);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["state"], "CANCELLED");
  EXPECT_EQ(State(id), JobState::kCancelled);
}

TEST_F(HttpStandbyTest, TheWorkersListIsTheActiveReplicasAndIsRedirectedToo) {
  httplib::Client client("127.0.0.1", standby_->port());
  auto res = client.Get("/api/v1/workers");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 307);
  EXPECT_EQ(res->get_header_value("Location"), active_url_ + "/api/v1/workers");
}

TEST_F(HttpStandbyTest, AuthenticationComesFirstAndNoActiveReplicaIs503) {
  standby_ = StartServer(AliceOnly, true);
  const std::string id = Submit("a");
  httplib::Client client("127.0.0.1", standby_->port());
  auto res = PostCancel(client, id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);  // No redirect for an unauthenticated caller.
  res = PostCancel(client, id, "alice");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 307);

  SetTarget("");  // Between the active one's death and a takeover.
  res = PostCancel(client, id, "alice");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  EXPECT_EQ(res->get_header_value(kActiveHeader), "unknown");
  EXPECT_THAT(json::parse(res->body)["error"].get<std::string>(), HasSubstr("standby"));
  EXPECT_EQ(State(id), JobState::kQueued);
}

}  // namespace
}  // namespace lmtrain::testing
