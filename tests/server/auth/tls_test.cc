// TLS for gRPC: lm-server with --tls-cert/--tls-key (and --tls-client-ca for mutual TLS),
// clients verifying it with --tls-ca. Certificates are made by `openssl` at test time.
#include <gtest/gtest.h>

#include "client/job_client.h"
#include "server/auth/server_credentials.h"
#include "tests/server/auth/test_certs.h"

namespace lmtrain {
namespace {

using testing::TempDir;
using testing::TestCerts;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(certs_.ok()) << "openssl could not make the test certs"; }

  void StartServer(bool mutual, bool auth = false) {
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.data_dir = (dir_.path() / "data").string();
    o.tls.cert = certs_.Path("server.pem");
    o.tls.key = certs_.Path("server.key");
    if (mutual) o.tls.client_ca = certs_.Path("ca.pem");
    if (auth) o.auth_tokens_file = dir_.Write("tokens.yaml", testing::TokensYaml());
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // ListJobs over a channel with these client settings.
  absl::Status List(ClientChannelOptions o) {
    o.target = "127.0.0.1:" + std::to_string(server_->port());
    auto channels = ClientChannelFactory::Create(o);
    if (!channels.ok()) return channels.status();
    return JobClient(channels->NewChannel(), 3000).List(10).status();
  }

  ClientChannelOptions Client(const std::string& ca, const std::string& cert = "",
                              const std::string& key = "", const std::string& token = "") {
    ClientChannelOptions o;
    o.tls_ca = ca.empty() ? "" : certs_.Path(ca);
    o.tls_cert = cert.empty() ? "" : certs_.Path(cert);
    o.tls_key = key.empty() ? "" : certs_.Path(key);
    o.token = token;
    return o;
  }

  TestCerts certs_;
  TempDir dir_{"tls"};
  std::unique_ptr<Server> server_;
};

TEST_F(TlsTest, RightCaWorksWrongCaAndPlaintextFail) {
  StartServer(/*mutual=*/false);
  EXPECT_TRUE(List(Client("ca.pem")).ok());
  EXPECT_EQ(List(Client("other-ca.pem")).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(List(Client("")).code(), absl::StatusCode::kUnavailable);  // Plaintext to a TLS port.
}

TEST_F(TlsTest, MutualTlsRejectsAClientWithoutCertificate) {
  StartServer(/*mutual=*/true);
  EXPECT_EQ(List(Client("ca.pem")).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(List(Client("ca.pem", "client.pem", "client.key")).ok());
}

TEST_F(TlsTest, TokensTravelOverTls) {
  StartServer(/*mutual=*/false, /*auth=*/true);
  EXPECT_EQ(List(Client("ca.pem")).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(List(Client("ca.pem", "", "", testing::kAliceToken)).ok());
}

ServerTlsOptions ServerTls(const std::string& cert, const std::string& key) {
  ServerTlsOptions o;
  o.cert = cert;
  o.key = key;
  return o;
}

TEST_F(TlsTest, BadFilesAreNamedInErrors) {
  EXPECT_EQ(MakeServerCredentials(ServerTls(certs_.Path("server.pem"), "")).status().message(),
            "--tls-cert and --tls-key must be given together");
  auto missing = MakeServerCredentials(ServerTls("/nonexistent/s.pem", "/nonexistent/k"));
  EXPECT_EQ(missing.status().message(), "--tls-cert /nonexistent/s.pem: cannot read file");
  auto not_pem =
      MakeServerCredentials(ServerTls(dir_.Write("junk.pem", "hello"), certs_.Path("server.key")));
  EXPECT_NE(not_pem.status().message().find("not a PEM file"), std::string::npos);
  ClientChannelOptions bad_ca;
  bad_ca.tls_ca = "/nonexistent/ca.pem";
  EXPECT_EQ(ClientChannelFactory::Create(bad_ca).status().message(),
            "--tls-ca /nonexistent/ca.pem: cannot read file");
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.data_dir = (dir_.path() / "data").string();
  o.tls = ServerTls(certs_.Path("server.pem"), "/nonexistent/k.pem");
  EXPECT_EQ(Server::Start(o).status().message(), "--tls-key /nonexistent/k.pem: cannot read file");
}

}  // namespace
}  // namespace lmtrain
