// TrainerState::ReadFile on what a checkpoint folder may hold: a round trip, and step counts
// that are not whole numbers within int64_t (found by checkpoint_fuzz: a float beyond int64_t's
// range was converted with undefined behaviour) refused as DataLoss naming the field.
#include "worker/trainer_base/trainer_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

std::string WriteState(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path) << text;
  return path;
}

nlohmann::json Sample() {
  TrainerState state;
  state.global_step = 10;
  state.max_steps = 20;
  state.save_steps = 10;
  return state.ToJson();
}

TEST(TrainerStateTest, ReadsWhatItWrote) {
  auto read = TrainerState::ReadFile(WriteState("state-ok.json", Sample().dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->global_step, 10);
  EXPECT_EQ(read->max_steps, 20);
}

// num_input_tokens_seen comes back (a resumed run continues it); a file without it (older
// lm-train) reads as 0, one with a bad value is DataLoss.
TEST(TrainerStateTest, InputTokensSeenRoundTrip) {
  nlohmann::json j = Sample();
  j["num_input_tokens_seen"] = int64_t{1} << 40;
  auto read = TrainerState::ReadFile(WriteState("state-tokens.json", j.dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->num_input_tokens_seen, int64_t{1} << 40);
  j.erase("num_input_tokens_seen");
  read = TrainerState::ReadFile(WriteState("state-tokens-old.json", j.dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->num_input_tokens_seen, 0);
  j["num_input_tokens_seen"] = 1.5;
  read = TrainerState::ReadFile(WriteState("state-tokens-bad.json", j.dump()));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
}

// HF 5's best_global_step (null until a best metric exists) and total_flos come back; files
// without them (older lm-train) read as unset and 0.
TEST(TrainerStateTest, BestGlobalStepAndTotalFlosRoundTrip) {
  nlohmann::json j = Sample();
  EXPECT_TRUE(j["best_global_step"].is_null());
  TrainerState state;
  state.best_metric = 0.25;
  state.best_global_step = 8;
  state.total_flos = 1.5e17;
  j = state.ToJson();
  auto read = TrainerState::ReadFile(WriteState("state-best.json", j.dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->best_global_step, 8);
  EXPECT_EQ(read->total_flos, 1.5e17);
  j.erase("best_global_step");
  j.erase("total_flos");
  read = TrainerState::ReadFile(WriteState("state-best-old.json", j.dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->best_global_step.has_value());
  EXPECT_EQ(read->total_flos, 0);
  j["best_global_step"] = "eight";
  read = TrainerState::ReadFile(WriteState("state-best-bad.json", j.dump()));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
}

TEST(TrainerStateTest, AWholeFloatIsTakenAsItsInteger) {
  nlohmann::json j = Sample();
  j["global_step"] = 10.0;
  auto read = TrainerState::ReadFile(WriteState("state-float.json", j.dump()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->global_step, 10);
}

TEST(TrainerStateTest, StepsBeyondInt64OrNotWholeAreDataLoss) {
  for (const char* value : {"1000000000000000000000", "-1e300", "2.5", "\"ten\""}) {
    nlohmann::json j = Sample();
    j["eval_steps"] = nlohmann::json::parse(value);
    auto read = TrainerState::ReadFile(WriteState("state-bad.json", j.dump()));
    ASSERT_FALSE(read.ok()) << value;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << value;
    EXPECT_THAT(read.status().message(), HasSubstr("eval_steps must be a whole number")) << value;
  }
}

}  // namespace
}  // namespace lmtrain
