// postgres_test_fixture start|stop|database STATE_DIR: the ctest fixture that runs one PostgreSQL
// test server for all the tests that need one (tests/storage/postgres_test_server.h), and the
// throwaway PostgreSQL of the benchmark scripts (bench/run_api_bench.sh, bench/run_rss_bench.sh).
//   start STATE_DIR [--durable]: starts a server and publishes it in STATE_DIR (or, where no
//          server can run here, the reason, which the tests report as a skip); exits 0 either
//          way. --durable: PostgreSQL's durable defaults (PostgresTestServer::Options).
//   stop STATE_DIR: stops the published server and removes STATE_DIR.
//   database STATE_DIR: creates an empty database on the published server and prints its
//          postgres:// URI; exits 1 with the reason when there is none.
#include <filesystem>
#include <iostream>
#include <string>

#include "tests/storage/postgres_test_server.h"

namespace {

using lmtrain::testing::PostgresTestServer;

int Start(const std::string& state, bool durable) {
  std::error_code ec;
  if (auto old = PostgresTestServer::Attach(state); old.ok()) (*old)->Stop().IgnoreError();
  std::filesystem::remove_all(state, ec);
  auto server = PostgresTestServer::Start({durable});
  if (!server.ok()) {
    std::cout << "no PostgreSQL test server: " << server.status().message() << "\n";
    return PostgresTestServer::PublishSkip(state, server.status()).ok() ? 0 : 1;
  }
  std::cout << "PostgreSQL test server on port " << (*server)->port() << "\n";
  return (*server)->Publish(state).ok() ? 0 : 1;
}

int Stop(const std::string& state) {
  auto server = PostgresTestServer::Attach(state);
  absl::Status stopped = server.ok() ? (*server)->Stop() : absl::OkStatus();
  std::error_code ec;
  std::filesystem::remove_all(state, ec);
  if (!stopped.ok()) std::cerr << stopped.message() << "\n";
  return stopped.ok() ? 0 : 1;
}

int Database(const std::string& state) {
  auto server = PostgresTestServer::Attach(state);
  absl::StatusOr<std::string> uri =
      server.ok() ? (*server)->CreateDatabase() : absl::StatusOr<std::string>(server.status());
  if (!uri.ok()) {
    std::cerr << "postgres_test_fixture: " << uri.status().message() << "\n";
    return 1;
  }
  std::cout << *uri << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  const bool durable = argc == 4 && std::string(argv[3]) == "--durable";
  if (argc != 3 && !(command == "start" && durable)) {
    std::cerr << "usage: postgres_test_fixture start STATE_DIR [--durable] | stop STATE_DIR | "
                 "database STATE_DIR\n";
    return 2;
  }
  const std::string state = argv[2];
  if (command == "start") return Start(state, durable);
  if (command == "stop") return Stop(state);
  if (command == "database") return Database(state);
  std::cerr << "postgres_test_fixture: unknown command '" << command << "'\n";
  return 2;
}
