#include "tests/storage/postgres_test_server.h"

#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

std::string Quote(const std::string& s) { return "'" + s + "'"; }  // Paths without quotes.

// Runs `command` in sh and returns its output (stdout and stderr); Internal on a non-zero exit.
absl::StatusOr<std::string> Shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("popen failed: ", command));
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int rc = pclose(pipe);
  if (rc != 0) return absl::InternalError(absl::StrCat(command, " failed (", rc, "): ", out));
  return out;
}

// PostgreSQL's bin folder: $LMTRAIN_PG_BIN, else the newest /usr/lib/postgresql/N/bin.
absl::StatusOr<std::string> FindBin() {
  if (const char* env = getenv("LMTRAIN_PG_BIN"); env != nullptr && *env != '\0') return env;
  std::string best;
  int best_version = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    int version = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &version)) continue;
    if (version > best_version && fs::exists(entry.path() / "bin" / "initdb")) {
      best_version = version;
      best = (entry.path() / "bin").string();
    }
  }
  if (best.empty()) {
    return absl::FailedPreconditionError(
        "no PostgreSQL server binaries (/usr/lib/postgresql/N/bin; install postgresql or set "
        "LMTRAIN_PG_BIN)");
  }
  return best;
}

// The prefix that runs a command as the postgres user when we are root; "" otherwise.
absl::StatusOr<std::string> AsServerUser() {
  if (geteuid() != 0) return std::string();
  if (getpwnam("postgres") == nullptr) {
    return absl::FailedPreconditionError(
        "running as root and there is no 'postgres' user to run PostgreSQL as");
  }
  for (const char* prefix :
       {"runuser -u postgres --", "setpriv --reuid=postgres --regid=postgres --init-groups --"}) {
    if (Shell(absl::StrCat(prefix, " true")).ok()) return std::string(prefix) + " ";
  }
  return absl::FailedPreconditionError(
      "running as root and neither runuser nor setpriv can switch to the 'postgres' user");
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresTestServer>> PostgresTestServer::Start(
    const Options& options) {
  absl::StatusOr<std::string> bin = FindBin();
  if (!bin.ok()) return bin.status();
  absl::StatusOr<std::string> as_user = AsServerUser();
  if (!as_user.ok()) return as_user.status();
  std::string dir = (fs::temp_directory_path() / "lmtrain-pg-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return absl::InternalError("mkdtemp failed: " + dir);
  std::unique_ptr<PostgresTestServer> server(
      new PostgresTestServer(dir, *bin, *as_user, 0, /*owned=*/true));
  if (!as_user->empty()) {
    const passwd* pw = getpwnam("postgres");
    if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::FailedPreconditionError("cannot chown " + dir + " to postgres");
    }
  }
  absl::StatusOr<std::string> init =
      server->Pg("initdb", absl::StrCat("-D ", Quote(dir + "/data"),
                                        " -U postgres -A trust -E UTF8 --locale=C --no-sync"));
  if (!init.ok()) return init.status();
  const char* fast = options.durable
                         ? ""
                         : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  absl::Status started = absl::UnknownError("not started");
  for (int attempt = 0; attempt < 3 && !started.ok(); ++attempt) {  // The port may get taken.
    server->port_ = FreePort();
    started =
        server
            ->Pg("pg_ctl",
                 absl::StrCat("-D ", Quote(dir + "/data"), " -l ", Quote(dir + "/log"),
                              " -w -t 60 -o ",
                              Quote(absl::StrCat("-p ", server->port_, " -k ", dir,
                                                 " -c listen_addresses=127.0.0.1", fast)),
                              " start"))
            .status();
  }
  if (!started.ok()) {
    return absl::Status(started.code(),
                        absl::StrCat(started.message(), "\nserver log: ", ReadFile(dir + "/log")));
  }
  return server;
}

absl::StatusOr<std::unique_ptr<PostgresTestServer>> PostgresTestServer::Attach(
    const std::string& state_dir) {
  const fs::path state(state_dir);
  if (fs::exists(state / "skip")) {
    return absl::FailedPreconditionError(ReadFile(state / "skip"));
  }
  int port = 0;
  if (!absl::SimpleAtoi(ReadFile(state / "port"), &port)) {
    return absl::NotFoundError(absl::StrCat("no PostgreSQL test server published in ", state_dir));
  }
  absl::StatusOr<std::string> bin = FindBin();
  if (!bin.ok()) return bin.status();
  absl::StatusOr<std::string> as_user = AsServerUser();
  if (!as_user.ok()) return as_user.status();
  return std::unique_ptr<PostgresTestServer>(
      new PostgresTestServer(ReadFile(state / "cluster"), *bin, *as_user, port, /*owned=*/false));
}

absl::Status PostgresTestServer::Publish(const std::string& state_dir) {
  const fs::path state(state_dir);
  std::error_code ec;
  fs::create_directories(state, ec);
  fs::remove(state / "skip", ec);
  std::ofstream(state / "cluster") << dir_ << "\n";
  std::ofstream(state / "port") << port_ << "\n";
  owned_ = false;
  return absl::OkStatus();
}

absl::Status PostgresTestServer::PublishSkip(const std::string& state_dir,
                                             const absl::Status& reason) {
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  std::ofstream(fs::path(state_dir) / "skip") << reason.message() << "\n";
  return absl::OkStatus();
}

PostgresTestServer::~PostgresTestServer() {
  if (owned_) Stop().IgnoreError();
}

absl::StatusOr<std::string> PostgresTestServer::Pg(const std::string& program,
                                                   const std::string& args) const {
  return Shell(absl::StrCat(as_user_, Quote(bin_ + "/" + program), " ", args));
}

std::string PostgresTestServer::Uri(const std::string& database) const {
  return absl::StrCat("postgres://postgres@127.0.0.1:", port_, "/", database);
}

absl::StatusOr<std::string> PostgresTestServer::Query(const std::string& database,
                                                      const std::string& sql) {
  PGconn* conn = PQconnectdb(Uri(database).c_str());
  absl::StatusOr<std::string> value;
  if (PQstatus(conn) != CONNECTION_OK) {
    value = absl::UnavailableError(absl::StrCat("connect: ", PQerrorMessage(conn)));
  } else {
    PGresult* result = PQexec(conn, sql.c_str());
    const ExecStatusType rc = PQresultStatus(result);
    if (rc != PGRES_COMMAND_OK && rc != PGRES_TUPLES_OK) {
      value = absl::InternalError(absl::StrCat(sql, ": ", PQresultErrorMessage(result)));
    } else {
      value = PQntuples(result) > 0 ? PQgetvalue(result, 0, 0) : "";
    }
    PQclear(result);
  }
  PQfinish(conn);
  return value;
}

absl::StatusOr<std::string> PostgresTestServer::CreateDatabase() {
  static int counter = 0;
  const std::string name = absl::StrCat("lmtrain_", getpid(), "_", counter++);
  absl::StatusOr<std::string> created = Query("postgres", "CREATE DATABASE " + name);
  if (!created.ok()) return created.status();
  return Uri(name);
}

absl::Status PostgresTestServer::Restart() {
  // -l as for start: the new postmaster must not inherit our output pipe.
  return Pg("pg_ctl", absl::StrCat("-D ", Quote(dir_ + "/data"), " -l ", Quote(dir_ + "/log"),
                                   " -w -t 60 -m fast restart"))
      .status();
}

absl::Status PostgresTestServer::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  absl::Status status =
      Pg("pg_ctl", absl::StrCat("-D ", Quote(dir_ + "/data"), " -w -m immediate stop")).status();
  std::error_code ec;
  fs::remove_all(dir_, ec);
  return status;
}

absl::StatusOr<PostgresTestServer*> SharedPostgresServer() {
  static auto* shared = new absl::StatusOr<std::unique_ptr<PostgresTestServer>>([] {
    const char* state = getenv("LMTRAIN_TEST_POSTGRES_DIR");
    if (state != nullptr && *state != '\0') {
      auto attached = PostgresTestServer::Attach(state);
      if (attached.ok() || attached.status().code() == absl::StatusCode::kFailedPrecondition) {
        return attached;
      }
    }
    return PostgresTestServer::Start();
  }());
  // Stops a server this process started when the process exits (normally, or after failed
  // tests, which still return from main).
  static const bool registered = [] {
    atexit([] { delete shared; });
    return true;
  }();
  (void)registered;
  if (!shared->ok()) return shared->status();
  return shared->value().get();
}

}  // namespace lmtrain::testing
