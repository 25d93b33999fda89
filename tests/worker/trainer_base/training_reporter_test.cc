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

// With include_num_input_tokens_seen, HF's Trainer.log adds num_input_tokens_seen to every log
// (after "epoch"), and to training logs speed_metrics' train_runtime and train_tokens_per_second
// over this run's tokens.
TEST(TrainingReporterTest, InputTokensSeenGoIntoEveryLog) {
  RecordingSink sink;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err);
  reporter.SetInputTokensSeen(4096);
  TrainLogRecord log = Log();
  log.session_input_tokens = 1000;
  reporter.OnTrainLog(log);
  EXPECT_THAT(out.str(), HasSubstr("{'loss': 3.21, 'grad_norm': 1.5, 'learning_rate': 0.0009, "
                                   "'epoch': 0.5, 'num_input_tokens_seen': 4096, "
                                   "'train_runtime': 5.0, 'train_tokens_per_second': 200.0}\n"));
  EXPECT_EQ(reporter.log_history()[0]["num_input_tokens_seen"], 4096);
  EXPECT_EQ(reporter.log_history()[0]["train_tokens_per_second"], 200.0);
  ASSERT_EQ(sink.events.size(), 1u);  // Relayed to lm-server with the other metrics.
  EXPECT_EQ(sink.events[0].metrics.num_input_tokens_seen, 4096);
  EvalLogRecord eval;
  eval.step = 10;
  eval.eval_loss = 2.0;
  eval.runtime_seconds = 1;
  reporter.OnEval(eval);
  EXPECT_THAT(out.str(), HasSubstr("'epoch': 0.0, 'num_input_tokens_seen': 4096}\n"));
  EXPECT_EQ(reporter.log_history()[1]["num_input_tokens_seen"], 4096);
  EXPECT_FALSE(reporter.log_history()[1].contains("train_runtime"));
  TrainSummary summary;
  summary.step = 10;
  summary.runtime_seconds = 5;
  reporter.OnTrainEnd(summary);
  EXPECT_EQ(reporter.log_history()[2]["num_input_tokens_seen"], 4096);
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
  EXPECT_EQ(j["num_input_tokens_seen"], 0);  // HF writes it always.
}

TEST(FormatDurationTest, HoursMinutesSeconds) {
  EXPECT_EQ(FormatDuration(3723.4), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "0:00:00");
}

}  // namespace
}  // namespace lmtrain
