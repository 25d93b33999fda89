// CheckpointPredictor with a stand-in trainer: a shell script in place of lm-train that prints
// its arguments as JSON (or fails, or hangs), run as a real child process, so the checkpoint
// choice, the command line, the errors and the timeout are checked without LibTorch. The real
// lm-train predict runs in tests/integration/predict_end_to_end_test.cc.
#include "server/checkpoint_predictor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/text/dataset_cache/temp_dir.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_internal::TempDir;

class CheckpointPredictorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    artifacts_ = dir_.File("artifacts");
    job_.id = "7";
    job_.state = JobState::kSucceeded;
    job_.output_dir = artifacts_ + "/jobs/7";
    fs::create_directories(job_.output_dir + "/checkpoint-2");
    fs::create_directories(job_.output_dir + "/checkpoint-10");
    // Prints its arguments as a JSON list of strings (none of them hold quotes here).
    Trainer(
        "printf '['; sep=''; for a in \"$@\"; do printf '%s\"%s\"' \"$sep\" \"$a\"; "
        "sep=','; done; printf ']\\n'");
  }

  void Trainer(const std::string& body) {
    trainer_ = dir_.Write("lm-train.sh", "#!/bin/sh\n" + body + "\n");
    chmod(trainer_.c_str(), 0755);
  }

  absl::StatusOr<PredictOutput> Predict(const PredictInput& input,
                                        absl::Duration timeout = absl::Seconds(30)) {
    CheckpointPredictor predictor({trainer_, artifacts_, timeout}, &launcher_);
    return predictor.Predict(job_, input);
  }

  // Waits (up to 30 s) until `path` exists.
  static bool AppearsSoon(const std::string& path) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!fs::exists(path)) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  TempDir dir_;
  std::string artifacts_, trainer_;
  JobRecord job_;
  PosixProcessLauncher launcher_;
};

PredictInput FillMask(const std::string& text) {
  PredictInput input;
  input.fill_mask = text;
  return input;
}

TEST_F(CheckpointPredictorTest, RunsLmTrainPredictOnTheLatestCheckpoint) {
  absl::StatusOr<PredictOutput> out = Predict(FillMask("This is a great [MASK]."));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->step, 10);
  EXPECT_EQ(out->json, "[\"predict\",\"--model\",\"" + job_.output_dir +
                           "/checkpoint-10\",\"--fill-mask\",\"This is a great [MASK].\"]\n");
}

TEST_F(CheckpointPredictorTest, PassesTheOptionsGivenAndTheStepAsked) {
  PredictInput input;
  input.generate = "It is a truth";
  input.step = 2;
  input.top_k = 3;
  input.max_new_tokens = 7;
  input.temperature = 0.5;
  input.seed = 9;
  absl::StatusOr<PredictOutput> out = Predict(input);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->step, 2);
  EXPECT_EQ(out->json, "[\"predict\",\"--model\",\"" + job_.output_dir +
                           "/checkpoint-2\",\"--generate\",\"It is a truth\",\"--top-k\",\"3\","
                           "\"--max-new-tokens\",\"7\",\"--temperature\",\"0.5\",\"--seed\","
                           "\"9\"]\n");
}

TEST_F(CheckpointPredictorTest, AJobThatHasNotFinishedIsRefused) {
  for (JobState state : {JobState::kQueued, JobState::kScheduled, JobState::kRunning}) {
    job_.state = state;
    absl::StatusOr<PredictOutput> out = Predict(FillMask("a [MASK]"));
    EXPECT_TRUE(absl::IsFailedPrecondition(out.status())) << out.status();
    EXPECT_THAT(out.status().message(), HasSubstr("job 7 is "));
    EXPECT_THAT(out.status().message(), HasSubstr("predict needs a finished job"));
  }
  job_.state = JobState::kCancelled;  // Finished: its checkpoints may be used.
  EXPECT_TRUE(Predict(FillMask("a [MASK]")).ok());
}

TEST_F(CheckpointPredictorTest, NoCheckpointIsNotFoundAndNoOutputFolderAPrecondition) {
  PredictInput input = FillMask("a [MASK]");
  input.step = 5;
  absl::StatusOr<PredictOutput> out = Predict(input);
  EXPECT_TRUE(absl::IsNotFound(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("job 7 has no checkpoint of that step"));
  fs::remove_all(job_.output_dir + "/checkpoint-2");
  fs::remove_all(job_.output_dir + "/checkpoint-10");
  out = Predict(FillMask("a [MASK]"));
  EXPECT_TRUE(absl::IsNotFound(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("job 7 has no checkpoint: no checkpoint-N"));
  job_.output_dir = dir_.File("elsewhere");  // Never outside the artifacts folder.
  out = Predict(FillMask("a [MASK]"));
  EXPECT_TRUE(absl::IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("job 7 has no checkpoint"));
}

TEST_F(CheckpointPredictorTest, NeedsExactlyOneInput) {
  EXPECT_TRUE(absl::IsInvalidArgument(Predict(PredictInput()).status()));
  PredictInput both = FillMask("a [MASK]");
  both.generate = "b";
  EXPECT_TRUE(absl::IsInvalidArgument(Predict(both).status()));
}

TEST_F(CheckpointPredictorTest, LmTrainErrorsComeBackWithTheirMessage) {
  Trainer("echo 'lm-train predict: error: no mask token [MASK] in the text' >&2; exit 1");
  absl::StatusOr<PredictOutput> out = Predict(FillMask("no mask"));
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_EQ(out.status().message(),
            "job 7 checkpoint-10: lm-train predict: error: no mask token [MASK] in the text");
}

TEST_F(CheckpointPredictorTest, AChildPastTheTimeoutIsKilled) {
  Trainer("exec sleep 60");
  const absl::Time start = absl::Now();
  absl::StatusOr<PredictOutput> out = Predict(FillMask("a [MASK]"), absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("did not finish within 300ms"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
}

TEST_F(CheckpointPredictorTest, PredictionsBeyondMaxRunningAreRefused) {
  const std::string fifo = dir_.File("release"), started = dir_.File("started");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Trainer("touch " + started + "; read line < " + fifo + "; echo '{}'");
  CheckpointPredictor predictor({trainer_, artifacts_, absl::Seconds(30), /*max_running=*/1},
                                &launcher_);
  absl::StatusOr<PredictOutput> first;
  std::thread running([&] { first = predictor.Predict(job_, FillMask("a [MASK]")); });
  ASSERT_TRUE(AppearsSoon(started));
  absl::StatusOr<PredictOutput> second = predictor.Predict(job_, FillMask("a [MASK]"));
  EXPECT_TRUE(absl::IsResourceExhausted(second.status())) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr("1 predictions are running on the server"));
  std::ofstream(fifo) << "go\n";
  running.join();
  EXPECT_TRUE(first.ok()) << first.status();
  Trainer("echo '{}'");
  EXPECT_TRUE(predictor.Predict(job_, FillMask("a [MASK]")).ok());  // Room again.
}

TEST_F(CheckpointPredictorTest, AMissingTrainerIsUnavailable) {
  trainer_ = dir_.File("no-such-lm-train");
  absl::StatusOr<PredictOutput> out = Predict(FillMask("a [MASK]"));
  EXPECT_TRUE(absl::IsUnavailable(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("cannot start " + trainer_));
}

}  // namespace
}  // namespace lmtrain
