// A throwaway PKI for the TLS tests, made with the `openssl` command-line tool at test time:
// a CA, a server certificate it signed (SAN localhost and 127.0.0.1), a client certificate it
// signed, and an unrelated second CA. EC P-256 keys: fast to generate.
#pragma once

#include <cstdlib>
#include <string>

#include "tests/server/auth/secure_server.h"

namespace lmtrain::testing {

class TestCerts {
 public:
  TestCerts() : dir_("certs") {
    const std::string d = dir_.path().string();
    dir_.Write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    dir_.Write("client.ext", "extendedKeyUsage=clientAuth\n");
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    ok_ = Run("openssl req -x509" + key + " -keyout " + d + "/ca.key -out " + d +
              "/ca.pem -days 2 -subj /CN=lmtrain-test-ca") &&
          Run("openssl req -x509" + key + " -keyout " + d + "/other-ca.key -out " + d +
              "/other-ca.pem -days 2 -subj /CN=other-ca") &&
          Sign("server", "localhost") && Sign("client", "alice");
  }
  bool ok() const { return ok_; }
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }

 private:
  static bool Run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }
  bool Sign(const std::string& name, const std::string& cn) {
    const std::string d = dir_.path().string() + "/";
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d +
               name + ".key -out " + d + name + ".csr -subj /CN=" + cn) &&
           Run("openssl x509 -req -in " + d + name + ".csr -CA " + d + "ca.pem -CAkey " + d +
               "ca.key -CAcreateserial -days 2 -out " + d + name + ".pem -extfile " + d + name +
               ".ext");
  }

  TempDir dir_;
  bool ok_ = false;
};

}  // namespace lmtrain::testing
