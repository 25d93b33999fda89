// HTTPS and tokens on lm-server's HTTP front end: with --tls-cert/--tls-key and --auth-tokens,
// the dashboard's JSON API is served over TLS with the gRPC certificate and takes the same
// bearer tokens (users see their own jobs, admins all; health needs none). Certificates are
// made by `openssl` at test time.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include "client/job_client.h"
#include "server/server.h"
#include "tests/server/auth/test_certs.h"
#include "tests/server/auth/test_tokens.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

using testing::TempDir;
using testing::TestCerts;

class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok()) << "openssl could not make the test certs";
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.http_listen = "127.0.0.1:0";
    o.data_dir = (dir_.path() / "data").string();
    o.tls.cert = certs_.Path("server.pem");
    o.tls.key = certs_.Path("server.key");
    o.auth_tokens_file = dir_.Write("tokens.yaml", testing::TokensYaml());
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);

    ClientChannelOptions c;
    c.target = "127.0.0.1:" + std::to_string(server_->port());
    c.tls_ca = certs_.Path("ca.pem");
    c.token = testing::kAliceToken;
    auto channels = ClientChannelFactory::Create(c);
    ASSERT_TRUE(channels.ok()) << channels.status();
    std::ofstream(job_.dir() / "job.yaml") << job_.Request().spec_yaml;
    auto id = JobClient(channels->NewChannel()).Submit((job_.dir() / "job.yaml").string(), "");
    ASSERT_TRUE(id.ok()) << id.status();
    job_id_ = *id;
  }

  // GET over HTTPS, verifying the server against the test CA; status 0 when no response.
  std::pair<int, std::string> Get(const std::string& path, const std::string& token) {
    httplib::SSLClient https("127.0.0.1", server_->http_port());
    https.set_ca_cert_path(certs_.Path("ca.pem").c_str());
    https.enable_server_certificate_verification(true);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = https.Get(path.c_str(), headers);
    if (!res) return {0, httplib::to_string(res.error())};
    return {res->status, res->body};
  }

  TestCerts certs_;
  TempDir dir_{"https"};
  testing::JobFolder job_{"https"};
  std::unique_ptr<Server> server_;
  std::string job_id_;
};

TEST_F(HttpsTest, ServesTheApiOverTlsWithTheGrpcTokens) {
  EXPECT_EQ(Get("/healthz", "").first, 200);  // Probes need no token.
  EXPECT_EQ(Get("/api/v1/jobs", "").first, 401);
  EXPECT_EQ(Get("/api/v1/jobs", "not-a-token-at-all-000").first, 401);

  auto [code, body] = Get("/api/v1/jobs", testing::kAliceToken);
  EXPECT_EQ(code, 200) << body;
  EXPECT_NE(body.find("\"id\":\"" + job_id_ + "\""), std::string::npos) << body;

  std::tie(code, body) = Get("/api/v1/jobs", testing::kBobToken);  // Another user: none.
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(body.find(job_id_), std::string::npos) << body;
  EXPECT_EQ(Get("/api/v1/jobs/" + job_id_, testing::kBobToken).first, 403);
  EXPECT_EQ(Get("/api/v1/jobs/" + job_id_, testing::kAdminToken).first, 200);
  EXPECT_EQ(Get("/api/v1/jobs/" + job_id_, testing::kWorkerToken).first, 403);
}

TEST_F(HttpsTest, PlaintextAndUnknownCaAreRefused) {
  httplib::Client plain("127.0.0.1", server_->http_port());
  plain.set_connection_timeout(2);
  plain.set_read_timeout(2);
  auto res = plain.Get("/healthz");
  EXPECT_FALSE(res && res->status == 200) << "plain HTTP answered on the HTTPS port";

  httplib::SSLClient other("127.0.0.1", server_->http_port());
  other.set_ca_cert_path(certs_.Path("other-ca.pem").c_str());
  other.enable_server_certificate_verification(true);
  EXPECT_FALSE(other.Get("/healthz")) << "a certificate from an unknown CA was accepted";
}

}  // namespace
}  // namespace lmtrain
