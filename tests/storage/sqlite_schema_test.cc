// Schema migrations: applied in order, each atomically, and never past a newer file.
#include "storage/internal/sqlite_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/internal/sqlite_connection.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain::storage_internal {
namespace {

using ::lmtrain::testing::ScratchDir;

class SqliteSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(db_, Connection::Open(dir_.File("s.db"), 1000)); }

  int Version() {
    absl::StatusOr<int> version = ReadSchemaVersion(*db_);
    EXPECT_TRUE(version.ok()) << version.status();
    return version.value_or(-1);
  }

  ScratchDir dir_;
  std::unique_ptr<Connection> db_;
};

TEST_F(SqliteSchemaTest, MigratesNewFileToLatestAndIsIdempotent) {
  EXPECT_EQ(Version(), 0);
  ASSERT_OK(Migrate(*db_, JobStoreMigrations()));
  EXPECT_EQ(Version(), LatestSchemaVersion());
  ASSERT_OK(Migrate(*db_, JobStoreMigrations()));
  EXPECT_EQ(Version(), LatestSchemaVersion());
}

TEST_F(SqliteSchemaTest, AppliesOnlyMigrationsNewerThanTheFile) {
  const std::vector<Migration> v1 = {{1, "CREATE TABLE a (x INTEGER)"}};
  const std::vector<Migration> v2 = {v1[0], {2, "ALTER TABLE a ADD COLUMN y TEXT"}};
  ASSERT_OK(Migrate(*db_, v1));
  EXPECT_EQ(Version(), 1);
  ASSERT_OK(Migrate(*db_, v2));  // Re-running migration 1 would fail: table a exists.
  EXPECT_EQ(Version(), 2);
  ASSERT_OK(db_->Exec("INSERT INTO a (x, y) VALUES (1, 'y')"));
}

TEST_F(SqliteSchemaTest, FailedMigrationLeavesThePreviousVersion) {
  const std::vector<Migration> migrations = {
      {1, "CREATE TABLE a (x INTEGER)"},
      {2, "CREATE TABLE b (x INTEGER); CREATE TABLE a (x INTEGER)"}};  // Second part fails.
  const absl::Status status = Migrate(*db_, migrations);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("version 2"));
  EXPECT_EQ(Version(), 1);
  EXPECT_FALSE(db_->Exec("SELECT * FROM b").ok());  // Table b was rolled back.
}

TEST_F(SqliteSchemaTest, RefusesFileFromNewerVersion) {
  ASSERT_OK(db_->Exec("PRAGMA user_version = 5"));
  const absl::Status status = Migrate(*db_, {{1, "CREATE TABLE a (x INTEGER)"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(db_->Exec("SELECT * FROM a").ok());
}

TEST_F(SqliteSchemaTest, RejectsMigrationListWithGaps) {
  const std::vector<Migration> migrations = {{1, "CREATE TABLE a (x INTEGER)"},
                                             {3, "CREATE TABLE c (x INTEGER)"}};
  EXPECT_EQ(Migrate(*db_, migrations).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Version(), 0);
}

}  // namespace
}  // namespace lmtrain::storage_internal
