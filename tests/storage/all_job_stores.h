// Every JobStore implementation, for the suites that run against each (the contract tests):
// SQLite on a scratch file, in-memory, and PostgreSQL on a fresh database of the shared test
// server (skipped with the reason where none can run).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/in_memory_job_store.h"
#include "storage/job_store.h"
#include "storage/postgres_job_store.h"
#include "storage/sqlite_job_store.h"
#include "tests/storage/postgres_test_server.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain::testing {

struct StoreFactory {
  std::string name;
  std::function<absl::StatusOr<std::unique_ptr<JobStore>>(const ScratchDir&)> open;
  // Why the store cannot run here ("" when it can): the test is skipped with this reason.
  std::function<std::string()> unavailable = [] { return std::string(); };
};

inline void PrintTo(const StoreFactory& factory, std::ostream* os) { *os << factory.name; }

inline std::vector<StoreFactory> AllStores() {
  return {
      {"Sqlite",
       [](const ScratchDir& dir) -> absl::StatusOr<std::unique_ptr<JobStore>> {
         SqliteJobStore::Options options;
         options.path = dir.File("jobs.db");
         absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(options);
         if (!store.ok()) return store.status();
         return std::unique_ptr<JobStore>(*std::move(store));
       }},
      {"InMemory",
       [](const ScratchDir&) -> absl::StatusOr<std::unique_ptr<JobStore>> {
         return std::make_unique<InMemoryJobStore>();
       }},
      {"Postgres",
       // A fresh database of the shared test server per test.
       [](const ScratchDir&) -> absl::StatusOr<std::unique_ptr<JobStore>> {
         absl::StatusOr<PostgresTestServer*> server = SharedPostgresServer();
         if (!server.ok()) return server.status();
         absl::StatusOr<std::string> uri = (*server)->CreateDatabase();
         if (!uri.ok()) return uri.status();
         absl::StatusOr<std::unique_ptr<PostgresJobStore>> store = PostgresJobStore::Open({*uri});
         if (!store.ok()) return store.status();
         return std::unique_ptr<JobStore>(*std::move(store));
       },
       [] {
         absl::StatusOr<PostgresTestServer*> server = SharedPostgresServer();
         return server.ok() ? std::string() : std::string(server.status().message());
       }},
  };
}

}  // namespace lmtrain::testing
