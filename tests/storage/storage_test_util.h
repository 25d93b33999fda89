// Helpers shared by the storage tests: a scratch directory and Status assertions.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "storage/job_store.h"

namespace lmtrain::testing {

// A fresh directory under the test temp dir, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "lmtrain_storage_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed: " << pattern;
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // `name` inside the directory.
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// "N -> M bytes, first difference at offset K" for two byte strings that differ.
inline std::string DescribeDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return absl::StrCat(a.size(), " -> ", b.size(), " bytes, first difference at offset ", i);
}

// One line per record, every field included, so that EXPECT_EQ on descriptions compares
// whole records and prints a readable difference.
inline std::string Describe(const JobRecord& j) {
  std::vector<std::string> checkpoints;
  for (const CheckpointRecord& c : j.checkpoints) {
    checkpoints.push_back(absl::StrCat(c.step, ":", c.path, "@", c.created_at_ms));
  }
  std::vector<std::string> attempts;
  for (const AttemptRecord& a : j.attempts) {
    attempts.push_back(absl::StrCat(a.number, ":", absl::StrJoin(a.worker_ids, "+"), "@",
                                    a.scheduled_at_ms, "-", a.ended_at_ms, ":", a.outcome));
  }
  std::vector<std::string> selector;
  for (const auto& [k, v] : j.resources.selector) selector.push_back(absl::StrCat(k, "=", v));
  return absl::StrCat("id=", j.id, " name=", j.name, " task=", j.task, " user=", j.user,
                      " resources=", j.resources.workers, "x", j.resources.slots_per_worker, "[",
                      absl::StrJoin(selector, ","), "] max_retries=", j.resources.max_retries,
                      " retries=", j.retries, " attempts=[", absl::StrJoin(attempts, ","), "]",
                      " state=", std::string(JobStateName(j.state)), " spec=", j.spec_yaml,
                      " priority=", j.priority, " request_id=", j.request_id,
                      " output_dir=", j.output_dir, " created=", j.created_at_ms,
                      " started=", j.started_at_ms, " finished=", j.finished_at_ms,
                      " error=", j.error, " worker=", j.worker_id,
                      " exit=", j.exit_code.has_value() ? absl::StrCat(*j.exit_code) : "none",
                      " metrics=", MetricsToJson(j.metrics), " checkpoints=[",
                      absl::StrJoin(checkpoints, ","), "]");
}

inline std::string Describe(const EventPayload& payload) {
  if (const auto* e = std::get_if<StateChangeEvent>(&payload)) {
    return absl::StrCat("state ", std::string(JobStateName(e->state)), " (", e->reason, ")");
  }
  if (const auto* m = std::get_if<TrainingMetrics>(&payload)) {
    return absl::StrCat("metrics ", MetricsToJson(*m));
  }
  if (const auto* c = std::get_if<CheckpointRecord>(&payload)) {
    return absl::StrCat("checkpoint ", c->step, " ", c->path, " @", c->created_at_ms);
  }
  const auto& log = std::get<LogEvent>(payload);
  return absl::StrCat("log ", log.stream, ": ", log.text);
}

// "SEQ job=ID @TIME PAYLOAD" for each event.
inline std::vector<std::string> Describe(const std::vector<EventRecord>& events) {
  std::vector<std::string> lines;
  for (const EventRecord& e : events) {
    lines.push_back(
        absl::StrCat(e.seq, " job=", e.job_id, " @", e.time_ms, " ", Describe(e.payload)));
  }
  return lines;
}

// A small clm job by "alice", created at 1000 ms, with an optional request id.
inline NewJob AliceJob(const std::string& name, const std::string& request_id = "") {
  NewJob job;
  job.name = name;
  job.task = "clm";
  job.spec_yaml = "model: tiny-gpt2\n";
  job.request_id = request_id;
  job.user = "alice";
  job.created_at_ms = 1000;
  return job;
}

inline const absl::Status& ToStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& ToStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace lmtrain::testing

#define LMTRAIN_TESTING_CONCAT_INNER_(a, b) a##b
#define LMTRAIN_TESTING_CONCAT_(a, b) LMTRAIN_TESTING_CONCAT_INNER_(a, b)

// ASSERT_OK(status_or_statusor): fails the test, printing the status, unless OK.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    const ::absl::Status lmtrain_status_ = ::lmtrain::testing::ToStatus(expr); \
    ASSERT_TRUE(lmtrain_status_.ok()) << lmtrain_status_;                      \
  } while (0)

// ASSERT_OK_AND_ASSIGN(auto x, StatusOrExpr()): assigns the value or fails the test.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  LMTRAIN_ASSERT_OK_AND_ASSIGN_IMPL_(LMTRAIN_TESTING_CONCAT_(lmtrain_sor_, __LINE__), lhs, expr)
#define LMTRAIN_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                       \
  ASSERT_TRUE(tmp.ok()) << tmp.status();                   \
  lhs = std::move(tmp).value()
