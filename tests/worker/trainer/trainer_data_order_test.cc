// The order and cut of the training data through the real Trainer: HF's group_by_length,
// data_seed, train_sampling_strategy "sequential" and dataloader_drop_last, for training
// batches and evaluations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/worker/trainer/trainer_fixture.h"
#include "worker/trainer/clm_task.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer_base/training_plan.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

// A ClmTask that records the examples of each training batch it builds.
class RecordingClmTask : public ClmTask {
 public:
  using ClmTask::ClmTask;
  std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                   uint64_t batch_seed) const override {
    absl::MutexLock lock(&mu_);
    batches_.push_back(indices);
    return ClmTask::PrepareTrainBatch(indices, batch_seed);
  }
  std::vector<BatchIndices> batches() const {
    absl::MutexLock lock(&mu_);
    return batches_;
  }

 private:
  mutable absl::Mutex mu_;
  mutable std::vector<BatchIndices> batches_;
};

// A line_by_line ClmExamples of Austen's lines (2..64 tokens), the first `num_train` of them
// when > 0.
ClmExamples LineExamples(const Tokenizer& tokenizer, size_t num_train = 0) {
  DataSpec data;
  data.train_file = kData + "austen_train.txt";
  data.line_by_line = true;
  auto examples = BuildClmExamples(data, tokenizer, /*block_size=*/64, 0);
  EXPECT_TRUE(examples.ok()) << examples.status();
  if (num_train > 0) examples->train.resize(num_train);
  return *std::move(examples);
}

// FastSpec without evaluations or periodic checkpoints.
TrainingSpec TrainOnlySpec() {
  TrainingSpec t = FastSpec();
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  t.do_eval = false;
  t.save_steps = 0;
  return t;
}

class TrainerDataOrderTest : public TrainerTest {
 protected:
  absl::StatusOr<std::unique_ptr<Trainer>> CreateOver(TrainingTask& task, const TrainingSpec& t) {
    Trainer::Options options;
    options.training = t;
    options.output_dir = out_dir_.string();
    return Trainer::Create(options, &task, tokenizer_, &reporter_, checkpoints_.get());
  }
};

TEST_F(TrainerDataOrderTest, GroupByLengthAndDataSeedOrderTheTrainingBatches) {
  const ClmExamples examples = LineExamples(*tokenizer_);
  TrainingSpec t = TrainOnlySpec();
  t.max_steps = 3;
  t.gradient_accumulation_steps = 2;
  t.group_by_length = true;
  t.data_seed = 5;
  RecordingClmTask task(NewModel(), examples, tokenizer_->PadId().value_or(0));
  const std::vector<int64_t> lengths = task.TrainExampleLengths();
  ASSERT_EQ(lengths.size(), examples.train.size());
  auto trainer = CreateOver(task, t);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  ASSERT_TRUE((*trainer)->Train().ok()) << err_.str();
  // data_seed 5, lengths grouped per update of 16 (TrainingPlanTest checks TrainOrderFor).
  const TrainOrder order = TrainOrderFor(t, 8, [&lengths] { return lengths; });
  ASSERT_EQ(order.group_size, 16);
  const std::vector<BatchIndices> expected = TrainBatches(lengths.size(), 8, order, 0);
  const std::vector<BatchIndices> built = task.batches();
  ASSERT_GE(built.size(), 6u);  // 3 updates of 2 micro-batches.
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(built[i], expected[i]) << "micro-batch " << i;
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  EXPECT_EQ(lengths[built[0][0]], longest);  // The longest batch comes first.
  EXPECT_NE(built[0], TrainBatches(lengths.size(), 8, TrainOrder{}, 0)[0]);
}

TEST_F(TrainerDataOrderTest, SequentialOrderAndDropLastCutEachEpochAsHf) {
  const ClmExamples examples = LineExamples(*tokenizer_, 45);
  ASSERT_EQ(examples.train.size(), 45u);
  TrainingSpec t = TrainOnlySpec();
  t.max_steps = 0;
  t.num_train_epochs = 2;
  t.gradient_accumulation_steps = 2;
  t.train_sampling_strategy = "sequential";
  t.dataloader_drop_last = true;
  RecordingClmTask task(NewModel(), examples, tokenizer_->PadId().value_or(0));
  auto trainer = CreateOver(task, t);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto outcome = (*trainer)->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status() << err_.str();
  // HF: len(dataloader) = 45 // 8 = 5 batches, ceil(5 / 2) = 3 updates per epoch, 6 in all.
  EXPECT_EQ(outcome->summary.step, 6);
  std::vector<BatchIndices> expected;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int64_t b = 0; b < 5; ++b) {
      BatchIndices batch(8);
      for (int64_t i = 0; i < 8; ++i) batch[i] = b * 8 + i;  // The file's order: 0..39.
      expected.push_back(batch);
    }
  }
  EXPECT_EQ(task.batches(), expected);  // Examples 40..44 never train.
}

TEST_F(TrainerDataOrderTest, DropLastEvaluatesTheFullEvaluationBatches) {
  TrainingSpec t = FastSpec();
  t.per_device_eval_batch_size = 24;  // 64 evaluation blocks: two full batches and one of 16.
  t.dataloader_drop_last = true;
  auto model = NewModel();
  Harness h = Make(t, model);
  auto record = h.trainer->Evaluate();
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->num_samples, 48);
  EvalOptions first48;
  first48.batch_size = 24;
  const std::vector<TokenIds> kept(examples_->eval.begin(), examples_->eval.begin() + 48);
  auto expected = EvaluateLoss(*model, kept, first48);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(record->eval_loss.has_value());
  EXPECT_DOUBLE_EQ(*record->eval_loss, expected->loss);
  EvalOptions all = first48;
  auto whole = EvaluateLoss(*model, examples_->eval, all);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->num_samples, 64);
  EXPECT_NE(whole->loss, expected->loss);

  t.per_device_eval_batch_size = 65;
  Harness none = Make(t, NewModel());
  auto refused = none.trainer->Evaluate();
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("dataloader_drop_last leaves no evaluation batch: 64 evaluation "
                        "examples do not fill one batch of 65"));
}

TEST_F(TrainerDataOrderTest, DropLastRefusesATrainingSetSmallerThanOneBatch) {
  TrainingSpec t = FastSpec();
  t.dataloader_drop_last = true;
  RecordingClmTask task(NewModel(), LineExamples(*tokenizer_, 7), 0);
  auto trainer = CreateOver(task, t);
  EXPECT_EQ(trainer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trainer.status().message(),
              HasSubstr("dataloader_drop_last leaves no training batch: 7 training examples do "
                        "not fill one batch of 8"));
}

// The sequential order does not depend on data_seed: a checkpoint resumes under another one
// (another strategy is still another data order).
TEST_F(TrainerDataOrderTest, SequentialCheckpointsResumeUnderAnotherDataSeed) {
  TrainingSpec t = TrainOnlySpec();
  t.max_steps = 2;
  t.save_steps = 2;
  t.train_sampling_strategy = "sequential";
  t.data_seed = 1;
  ASSERT_TRUE(Make(t, NewModel()).trainer->Train().ok());
  const fs::path checkpoint = out_dir_ / "checkpoint-2";
  t.data_seed = 2;
  EXPECT_TRUE(Make(t, NewModel()).trainer->ResumeFrom(checkpoint).ok());
  t.train_sampling_strategy = "random";
  const absl::Status refused = Make(t, NewModel()).trainer->ResumeFrom(checkpoint);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
}

TEST_F(TrainerDataOrderTest, CheckpointsFromBeforeTheSamplingStrategyKeyResumeByGroupByLength) {
  TrainingSpec t = TrainOnlySpec();
  t.max_steps = 2;
  t.save_steps = 2;
  t.group_by_length = true;
  ASSERT_TRUE(Make(t, NewModel()).trainer->Train().ok());
  const fs::path state = out_dir_ / "checkpoint-2" / "lmtrain_state.json";
  nlohmann::json j = nlohmann::json::parse(std::ifstream(state));
  EXPECT_EQ(j["train_sampling_strategy"], "group_by_length");
  EXPECT_EQ(j["dataloader_drop_last"], false);
  j.erase("train_sampling_strategy");  // As written before the key existed.
  j.erase("dataloader_drop_last");
  std::ofstream(state, std::ios::trunc) << j.dump();
  EXPECT_TRUE(Make(t, NewModel()).trainer->ResumeFrom(state.parent_path()).ok());
  TrainingSpec random = t;
  random.group_by_length = false;
  const absl::Status refused = Make(random, NewModel()).trainer->ResumeFrom(state.parent_path());
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("data order"));
  j["train_sampling_strategy"] = 5;
  std::ofstream(state, std::ios::trunc) << j.dump();
  EXPECT_TRUE(absl::IsDataLoss(Make(t, NewModel()).trainer->ResumeFrom(state.parent_path())));
}

}  // namespace
}  // namespace lmtrain
