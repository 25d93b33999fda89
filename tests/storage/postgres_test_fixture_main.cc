// postgres_test_fixture start|stop STATE_DIR: the ctest fixture that runs one PostgreSQL test
// server for all the tests that need one (tests/storage/postgres_test_server.h).
//   start: starts a server and publishes it in STATE_DIR (or, where no server can run here,
//          the reason, which the tests report as a skip); exits 0 either way.
//   stop:  stops the published server and removes STATE_DIR.
#include <filesystem>
#include <iostream>
#include <string>

#include "tests/storage/postgres_test_server.h"

int main(int argc, char** argv) {
  using lmtrain::testing::PostgresTestServer;
  if (argc != 3) {
    std::cerr << "usage: postgres_test_fixture start|stop STATE_DIR\n";
    return 2;
  }
  const std::string command = argv[1], state = argv[2];
  std::error_code ec;
  if (command == "start") {
    if (auto old = PostgresTestServer::Attach(state); old.ok()) (*old)->Stop().IgnoreError();
    std::filesystem::remove_all(state, ec);
    auto server = PostgresTestServer::Start();
    if (!server.ok()) {
      std::cout << "no PostgreSQL test server: " << server.status().message() << "\n";
      return PostgresTestServer::PublishSkip(state, server.status()).ok() ? 0 : 1;
    }
    std::cout << "PostgreSQL test server on port " << (*server)->port() << "\n";
    return (*server)->Publish(state).ok() ? 0 : 1;
  }
  if (command == "stop") {
    auto server = PostgresTestServer::Attach(state);
    absl::Status stopped = server.ok() ? (*server)->Stop() : absl::OkStatus();
    std::filesystem::remove_all(state, ec);
    if (!stopped.ok()) std::cerr << stopped.message() << "\n";
    return stopped.ok() ? 0 : 1;
  }
  std::cerr << "postgres_test_fixture: unknown command '" << command << "'\n";
  return 2;
}
