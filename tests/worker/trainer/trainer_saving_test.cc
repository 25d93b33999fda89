// What the Trainer saves: training.save_only_model, as HF's (periodic checkpoints hold the
// model but not the state a resume needs, and are never resumed from; a stop still saves a
// complete checkpoint, even at a step whose model-only checkpoint was just written, and the run
// resumes from it exactly), and HF 5's save_strategy best (a checkpoint after each evaluation
// that improves metric_for_best_model, and none other).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "tests/worker/trainer/trainer_fixture.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer_base/resume_point.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

bool Has(const fs::path& dir, const char* file) { return fs::exists(dir / file); }

TEST_F(TrainerTest, SaveOnlyModelCheckpointsHoldTheModelAndAStopStillResumes) {
  TrainingSpec t = FastSpec();
  t.max_steps = 8;
  t.warmup_steps = 2;
  t.logging_steps = 1;
  t.save_steps = 2;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  t.save_only_model = true;
  auto straight = NewModel();
  {
    Harness h = Make(t, straight);
    ASSERT_TRUE(h.trainer->Train().ok());
  }
  const fs::path last = out_dir_ / "checkpoint-8";
  for (const char* file :
       {"model.safetensors", "config.json", "trainer_state.json", "manifest.json"}) {
    EXPECT_TRUE(Has(last, file)) << file;
  }
  for (const char* file : {"optimizer.pt", "rng_state.pt", "lmtrain_state.json"}) {
    EXPECT_FALSE(Has(last, file)) << file;
  }
  auto reloaded = LoadCausalLm(last.string());  // The model itself is all there.
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  ExpectSameWeights(straight->HfStateDict(), (*reloaded)->HfStateDict());
  std::ostringstream warnings;
  EXPECT_EQ(NewestResumableCheckpoint(out_dir_.string(), warnings), std::nullopt);
  EXPECT_THAT(warnings.str(), HasSubstr("a model-only checkpoint of training.save_only_model"));
  {
    Harness h = Make(t, NewModel());
    const absl::Status status = h.trainer->ResumeFrom(last.string());
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr("holds the model only"));
    EXPECT_THAT(status.message(), HasSubstr("model.name_or_path: " + last.string()));
  }

  // Stopped after update 4, which also saved its model-only checkpoint: the stop saves
  // checkpoint-4 again, complete; the resumed run ends as the uninterrupted one.
  fs::remove_all(out_dir_);
  fs::create_directories(out_dir_);
  const auto outcome = TrainUntilStoppedAtLog(t, 4);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_TRUE(outcome->stopped);
  ASSERT_EQ(outcome->summary.step, 4);
  EXPECT_FALSE(Has(out_dir_ / "checkpoint-2", "lmtrain_state.json"));
  EXPECT_TRUE(Has(out_dir_ / "checkpoint-4", "lmtrain_state.json"));
  EXPECT_TRUE(Has(out_dir_ / "checkpoint-4", "optimizer.pt"));
  std::ostringstream ignored;
  EXPECT_EQ(NewestResumableCheckpoint(out_dir_.string(), ignored),
            (out_dir_ / "checkpoint-4").string());
  auto resumed = NewModel();
  torch::manual_seed(1234);
  Harness h = Make(t, resumed);
  ASSERT_TRUE(h.trainer->ResumeFrom((out_dir_ / "checkpoint-4").string()).ok());
  ASSERT_TRUE(h.trainer->Train().ok());
  ExpectSameWeights(straight->HfStateDict(), resumed->HfStateDict());
  EXPECT_FALSE(Has(out_dir_ / "checkpoint-6", "lmtrain_state.json"));  // Periodic again.
}

// save_strategy best: checkpoint-N exactly at the evaluations whose eval_loss beats every
// earlier one (with greater_is_better: true, only the first evaluation's), best_model_checkpoint
// the last of them; no checkpoint at the end of training.
TEST_F(TrainerTest, SaveStrategyBestSavesTheEvaluationsThatImprove) {
  for (const bool greater : {false, true}) {
    fs::remove_all(out_dir_);
    fs::create_directories(out_dir_);
    sink_.events.clear();
    TrainingSpec t = FastSpec();
    t.max_steps = 40;
    t.warmup_steps = 2;
    t.eval_steps = 4;
    t.eval_on_start = true;  // Not a save: HF saves from the periodic evaluations only.
    t.save_strategy = "best";
    t.greater_is_better = greater;
    Harness h = Make(t, NewModel());
    ASSERT_TRUE(h.trainer->Train().ok());
    std::set<std::string> expected;
    std::optional<double> best;
    std::string best_path;
    for (const TrainerEvent& e : sink_.events) {
      if (!e.metrics.eval_loss.has_value() || e.metrics.step.value_or(0) == 0) continue;
      const double loss = *e.metrics.eval_loss;
      if (best.has_value() && (greater ? loss <= *best : loss >= *best)) continue;
      best = loss;
      best_path = (out_dir_ / ("checkpoint-" + std::to_string(*e.metrics.step))).string();
      expected.insert(best_path);
    }
    std::set<std::string> saved;
    for (const auto& [step, path] : CheckpointWriter::List(out_dir_.string())) saved.insert(path);
    EXPECT_EQ(saved, expected) << "greater_is_better " << greater;
    EXPECT_EQ(saved.size() == 1, greater);  // Training lowers the loss: several improve.
    EXPECT_EQ(h.trainer->State().best_model_checkpoint, best_path);
    EXPECT_EQ(h.trainer->State().best_metric, best);
  }
}

}  // namespace
}  // namespace lmtrain
