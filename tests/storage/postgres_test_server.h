// PostgresTestServer: a real, throwaway PostgreSQL server for tests (and the benchmarks, through
// postgres_test_fixture): initdb + pg_ctl start into a temp folder, listening on 127.0.0.1 on a
// free port with trust authentication; stopped and removed on destruction. Tests run it with
// fsync, synchronous_commit and full_page_writes off; Options::durable keeps PostgreSQL's
// durable defaults instead, for figures that should count the commit's flush.
//
//   Start() --> [initdb, pg_ctl start] --> running --> Restart() ... -->
//   destroyed (owner): pg_ctl stop -m immediate, folder removed
//
// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user
// (runuser, else setpriv) in a folder chowned to it. Where that is impossible, or no
// PostgreSQL binaries are installed (/usr/lib/postgresql/*/bin, or $LMTRAIN_PG_BIN), Start
// returns FailedPrecondition with the reason, which tests report through GTEST_SKIP.
//
// SharedPostgresServer() gives every test of one binary the same server: the one the ctest
// fixture postgres_server_start runs (its folder in $LMTRAIN_TEST_POSTGRES_DIR), or, when the
// binary runs on its own, one it starts on first use and stops at exit. Not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain::testing {

class PostgresTestServer {
 public:
  struct Options {
    // false (default): fsync, synchronous_commit and full_page_writes off (fast, and enough
    // for tests: the server is thrown away). true: PostgreSQL's durable defaults.
    bool durable = false;
  };
  // A new server in a new temp folder, owned (stopped and removed on destruction).
  static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Start(const Options& options);
  static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Start() { return Start(Options()); }
  // The server another process published to `state_dir`: not stopped on destruction.
  // FailedPrecondition with the reason when that process could not start one (PublishSkip).
  static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Attach(const std::string& state_dir);
  // Records in `state_dir` (created) how to Attach to this server, and hands the server over:
  // this object no longer stops it.
  absl::Status Publish(const std::string& state_dir);
  // Records in `state_dir` why no server could start, for Attach to report.
  static absl::Status PublishSkip(const std::string& state_dir, const absl::Status& reason);

  ~PostgresTestServer();
  PostgresTestServer(const PostgresTestServer&) = delete;
  PostgresTestServer& operator=(const PostgresTestServer&) = delete;

  int port() const { return port_; }
  // postgres://postgres@127.0.0.1:PORT/DATABASE
  std::string Uri(const std::string& database) const;
  // Creates an empty database with a fresh name and returns its URI.
  absl::StatusOr<std::string> CreateDatabase();
  // Runs SQL (no parameters) in `database`; returns the first column of its first row ("" when
  // it yields none).
  absl::StatusOr<std::string> Query(const std::string& database, const std::string& sql);
  // pg_ctl restart -m fast: every client connection is dropped; data stays.
  absl::Status Restart();
  // Stops the server and removes its folder (what destruction of the owner does).
  absl::Status Stop();

 private:
  PostgresTestServer(std::string dir, std::string bin, std::string as_user, int port, bool owned)
      : dir_(std::move(dir)),
        bin_(std::move(bin)),
        as_user_(std::move(as_user)),
        port_(port),
        owned_(owned) {}
  // Runs a PostgreSQL program (as the server's user) and returns its output.
  absl::StatusOr<std::string> Pg(const std::string& program, const std::string& args) const;

  std::string dir_;      // Folder holding data/, log and port.
  std::string bin_;      // PostgreSQL's bin folder.
  std::string as_user_;  // Command prefix that runs as the postgres user; "" when not root.
  int port_ = 0;
  bool owned_ = false;
  bool stopped_ = false;
};

// The server shared by this test binary; FailedPrecondition (a reason to skip) when none can
// run here.
absl::StatusOr<PostgresTestServer*> SharedPostgresServer();

}  // namespace lmtrain::testing
