#include "worker/trainer_base/training_reporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "worker/trainer_base/run_results.h"
#include "worker/trainer_base/trainer_state.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

class RecordingSink : public EventSink {
 public:
  absl::Status Emit(const TrainerEvent& event) override {
    events.push_back(event);
    return fail ? absl::InternalError("pipe closed") : absl::OkStatus();
  }
  std::vector<TrainerEvent> events;
  bool fail = false;
};

TrainLogRecord Log() {
  TrainLogRecord r;
  r.step = 10;
  r.max_steps = 100;
  r.loss = 3.210049;
  r.learning_rate = 0.0009;
  r.grad_norm = 1.5;
  r.epoch = 0.5012;
  r.tokens_per_second = 1000;
  r.elapsed_seconds = 5;
  return r;
}

TEST(TrainingReporterTest, TrainLogGoesToStdoutEventsAndHistory) {
  RecordingSink sink;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err);
  reporter.OnTrainLog(Log());
  EXPECT_THAT(out.str(), HasSubstr("{'loss': 3.21, 'grad_norm': 1.5, 'learning_rate': 0.0009, "
                                   "'epoch': 0.5}\n"));
  EXPECT_THAT(out.str(), HasSubstr("[step 10/100  10%]"));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].type, TrainerEvent::Type::kMetrics);
  EXPECT_EQ(sink.events[0].metrics.step, 10);
  EXPECT_EQ(sink.events[0].metrics.loss, 3.210049);  // Unrounded.
  EXPECT_EQ(sink.events[0].metrics.tokens_per_second, 1000);
  ASSERT_EQ(reporter.log_history().size(), 1u);
  EXPECT_EQ(reporter.log_history()[0]["loss"], 3.21);
  EXPECT_EQ(reporter.log_history()[0]["step"], 10);
  EXPECT_TRUE(err.str().empty());
}

TEST(TrainingReporterTest, EvalAndCheckpointEvents) {
  RecordingSink sink;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err);
  EvalLogRecord eval;
  eval.step = 50;
  eval.epoch = 1;
  eval.eval_loss = 2.0;
  eval.metrics = {{"perplexity", 7.38905609893065}};
  eval.runtime_seconds = 2;
  eval.num_samples = 10;
  eval.num_batches = 4;
  reporter.OnEval(eval);
  reporter.OnCheckpoint(50, "/o/checkpoint-50");
  EXPECT_THAT(out.str(), HasSubstr("{'eval_loss': 2.0, 'perplexity': 7.38905609893065, "
                                   "'eval_runtime': 2.0, 'eval_samples_per_second': 5.0, "
                                   "'eval_steps_per_second': 2.0, 'epoch': 1.0}"));
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[0].metrics.eval_loss, 2.0);
  EXPECT_EQ(sink.events[1].type, TrainerEvent::Type::kCheckpoint);
  EXPECT_EQ(sink.events[1].path, "/o/checkpoint-50");
  EXPECT_EQ(reporter.log_history()[0]["eval_samples_per_second"], 5.0);
  nlohmann::json results = EvalResultsJson(eval);
  EXPECT_EQ(results["eval_samples"], 10);
  EXPECT_EQ(results["perplexity"], 7.38905609893065);
}

TEST(TrainingReporterTest, TaskMetricsTravelAsEvalMetrics) {
  RecordingSink sink;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err);
  EvalLogRecord eval;
  eval.step = 10;
  eval.metrics = {{"eval_exact_match", 40.0}, {"eval_f1", 55.5}};
  eval.runtime_seconds = 1;
  reporter.OnEval(eval);
  EXPECT_THAT(out.str(), HasSubstr("{'eval_exact_match': 40.0, 'eval_f1': 55.5, "));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_FALSE(sink.events[0].metrics.eval_loss.has_value());
  EXPECT_EQ(sink.events[0].metrics.eval_metrics.at("eval_f1"), 55.5);
  EXPECT_FALSE(reporter.log_history()[0].contains("eval_loss"));
  EXPECT_EQ(reporter.log_history()[0]["eval_exact_match"], 40.0);
}

TEST(TrainingReporterTest, FailingSinkWarnsOnceAndTrainingGoesOn) {
  RecordingSink sink;
  sink.fail = true;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err);
  reporter.OnTrainLog(Log());
  reporter.OnTrainLog(Log());
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_THAT(err.str(), HasSubstr("warning: pipe closed"));
  EXPECT_EQ(reporter.log_history().size(), 2u);
}

TEST(TrainerStateTest, HfKeysAndHistory) {
  TrainerState state;
  state.global_step = 20;
  state.max_steps = 40;
  state.epoch = 1.5;
  state.log_history.push_back({{"loss", 2.0}, {"step", 10}});
  const nlohmann::json j = nlohmann::json::parse(state.Serialize());
  EXPECT_EQ(j["global_step"], 20);
  EXPECT_EQ(j["max_steps"], 40);
  EXPECT_EQ(j["epoch"], 1.5);
  EXPECT_TRUE(j["best_metric"].is_null());
  EXPECT_EQ(j["log_history"][0]["loss"], 2.0);
  EXPECT_EQ(j["is_world_process_zero"], true);
}

TEST(FormatDurationTest, HoursMinutesSeconds) {
  EXPECT_EQ(FormatDuration(3723.4), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "0:00:00");
}

}  // namespace
}  // namespace lmtrain
