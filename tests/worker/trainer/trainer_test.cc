// End-to-end: a tiny GPT-2 learns Jane Austen with a sentencepiece tokenizer trained on the
// same text, through the real Trainer, ClmTask, checkpoint writer and reporter; and a run
// stopped mid-way resumes from its checkpoint to bit-identical weights.
#include "worker/trainer/trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/text/clm/fake_tokenizer.h"
#include "tests/worker/trainer/trainer_fixture.h"
#include "worker/models/parameter_count.h"
#include "worker/trainer/clm_task.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/optimizer_factory.h"
#include "worker/trainer_base/training_plan.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A model whose loss is NaN: the trainer must refuse to step on it.
class NanLossModel : public CausalLmModel {
 public:
  NanLossModel() { w_ = register_parameter("w", torch::ones({1})); }
  nlohmann::json HfConfig() const override { return nlohmann::json::object(); }
  NamedTensors HfStateDict() const override { return {}; }
  absl::Status LoadHfStateDict(const std::map<std::string, torch::Tensor>&, LoadReport*) override {
    return absl::OkStatus();
  }
  torch::Tensor Forward(const torch::Tensor& ids, const torch::Tensor&) override {
    return torch::zeros({ids.size(0), ids.size(1), 256});
  }
  torch::Tensor ForwardLoss(const torch::Tensor&, const torch::Tensor&,
                            const torch::Tensor&) override {
    return w_.sum() * std::nan("");
  }
  int64_t MaxPositions() const override { return 64; }
  int64_t VocabSize() const override { return 256; }

 private:
  torch::Tensor w_;
};

TEST_F(TrainerTest, TinyGpt2LearnsAndItsCheckpointReloads) {
  const auto model = NewModel();
  Harness h = Make(FastSpec(), model);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->stopped);
  EXPECT_EQ(outcome->summary.step, 150);
  auto final_eval = h.trainer->Evaluate();  // Same step: the step-150 result, not re-run.
  ASSERT_TRUE(final_eval.ok());

  const std::vector<double> evals = sink_.EvalLosses();  // Steps 0, 75, 150.
  ASSERT_EQ(evals.size(), 3u) << out_.str();
  EXPECT_NEAR(evals[0], std::log(1000.0), 0.5);       // An untrained model is near uniform.
  EXPECT_LT(evals[2], evals[0] - 0.8) << out_.str();  // Perplexity more than halved.
  EXPECT_EQ(final_eval->eval_loss, evals[2]);
  ASSERT_EQ(final_eval->metrics.size(), 1u);
  EXPECT_EQ(final_eval->metrics[0].first, "perplexity");
  EXPECT_NEAR(final_eval->metrics[0].second, std::exp(evals[2]), 1e-9);
  EXPECT_THAT(out_.str(), HasSubstr("{'loss': "));
  EXPECT_THAT(out_.str(), HasSubstr("***** Running training *****\n"));
  EXPECT_THAT(out_.str(), HasSubstr("  Total optimization steps = 150\n  Number of trainable "
                                    "parameters = "));

  const fs::path ckpt = out_dir_ / "checkpoint-150";
  for (const char* file : {"config.json", "model.safetensors", "spiece.model", "trainer_state.json",
                           "optimizer.pt", "rng_state.pt", "lmtrain_state.json"}) {
    EXPECT_TRUE(fs::exists(ckpt / file)) << file;
  }
  EXPECT_TRUE(fs::exists(out_dir_ / "checkpoint-75"));
  auto reloaded = LoadCausalLm(ckpt.string());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EvalOptions eval;
  eval.batch_size = 16;
  eval.pad_id = *tokenizer_->PadId();
  auto again = EvaluateLoss(**reloaded, examples_->eval, eval);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NEAR(again->loss, evals[2], 1e-5);

  std::ifstream state_file(ckpt / "trainer_state.json");
  const nlohmann::json state = nlohmann::json::parse(state_file);
  EXPECT_EQ(state["global_step"], 150);
  EXPECT_EQ(state["max_steps"], 150);
  ASSERT_GE(state["log_history"].size(), 6u);  // 6 train logs + 3 evals.
  EXPECT_EQ(state["log_history"][0]["step"], 0);
  EXPECT_LT(state["log_history"].back()["eval_loss"].get<double>(), evals[0]);
  // HF's floating_point_ops: 6 × non-embedding parameters × input positions (the blocks of 64
  // trained on: 150 updates of 8, an epoch's last batch shorter), in the checkpoint's state and
  // the final train log.
  ASSERT_GT(outcome->summary.num_samples, 149 * 8);
  const double flos = 6.0 * NumParameters(*model, true) * 64 * outcome->summary.num_samples;
  EXPECT_EQ(state["total_flos"].get<double>(), flos);
  EXPECT_EQ(h.trainer->State().log_history.back()["total_flos"].get<double>(), flos);
}

// Stopped after step 7 (checkpoint at 6), resumed in a fresh trainer and model: the final
// weights equal an uninterrupted run's bit for bit, dropout and AdamW state included, and the
// log history has each logged step exactly once.
TEST_F(TrainerTest, ResumedRunIsBitIdenticalToAnUninterruptedOne) {
  TrainingSpec t = FastSpec();
  t.max_steps = 12;
  t.warmup_steps = 2;
  t.logging_steps = 1;
  t.save_steps = 3;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  auto straight = NewModel();
  {
    Harness h = Make(t, straight);
    ASSERT_TRUE(h.trainer->Train().ok());
  }
  fs::remove_all(out_dir_);
  fs::create_directories(out_dir_);
  // Stopped after 7 updates (logging_steps 1): checkpoint-6 is the latest periodic one.
  const auto outcome = TrainUntilStoppedAtLog(t, 7);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_TRUE(outcome->stopped);
  ASSERT_EQ(outcome->summary.step, 7);
  ASSERT_TRUE(fs::exists(out_dir_ / "checkpoint-6"));
  ASSERT_TRUE(fs::exists(out_dir_ / "checkpoint-7"));  // Saved for the stop itself.
  ASSERT_FALSE(fs::exists(out_dir_ / "checkpoint-9"));
  auto resumed_model = NewModel();
  torch::manual_seed(1234);  // Whatever the RNG holds now, the checkpoint's state wins.
  Harness h = Make(t, resumed_model);
  ASSERT_TRUE(h.trainer->ResumeFrom((out_dir_ / "checkpoint-6").string()).ok());
  ASSERT_TRUE(h.trainer->Train().ok());
  ExpectSameWeights(straight->HfStateDict(), resumed_model->HfStateDict());
  std::vector<int64_t> logged;
  for (const nlohmann::json& entry : h.trainer->State().log_history) {
    if (entry.contains("loss")) logged.push_back(entry["step"].get<int64_t>());
  }
  EXPECT_EQ(logged, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  // The FLOPs count continues from the checkpoint's (6 updates) to the whole run's.
  EXPECT_EQ(h.trainer->State().total_flos, 6.0 * NumParameters(*straight, true) * 12 * 8 * 64);
}

// load_best_model_at_end: with greater_is_better on eval_loss the "best" is the first (worst)
// evaluation, so the kept and reloaded checkpoint is not the last one; save_total_limit 1
// keeps it beside the newest.
TEST_F(TrainerTest, LoadBestModelAtEndKeepsAndReloadsTheBestCheckpoint) {
  TrainingSpec t = FastSpec();
  t.max_steps = 30;
  t.warmup_steps = 0;
  t.eval_on_start = false;
  t.eval_steps = 10;
  t.save_steps = 10;
  t.save_total_limit = 1;
  t.load_best_model_at_end = true;
  t.greater_is_better = true;  // Perverse on purpose: picks step 10.
  checkpoints_ = std::make_unique<CheckpointWriter>(
      CheckpointWriter::Options{out_dir_.string(), t.save_total_limit});
  auto model = NewModel();
  Harness h = Make(t, model);
  ASSERT_TRUE(h.trainer->Train().ok());
  const TrainerState state = h.trainer->State();
  EXPECT_EQ(state.best_model_checkpoint, (out_dir_ / "checkpoint-10").string());
  EXPECT_EQ(state.best_global_step, 10);
  EXPECT_TRUE(fs::exists(out_dir_ / "checkpoint-10"));
  EXPECT_FALSE(fs::exists(out_dir_ / "checkpoint-20"));
  EXPECT_TRUE(fs::exists(out_dir_ / "checkpoint-30"));
  auto best = LoadCausalLm((out_dir_ / "checkpoint-10").string());
  ASSERT_TRUE(best.ok()) << best.status();
  const NamedTensors a = model->HfStateDict();
  const NamedTensors b = (*best)->HfStateDict();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
  auto final_eval = h.trainer->Evaluate();  // Re-run on the reloaded weights.
  ASSERT_TRUE(final_eval.ok());
  EXPECT_NEAR(*final_eval->eval_loss, *state.best_metric, 1e-6);
  EXPECT_THAT(out_.str(), HasSubstr("Loading best model from"));
}

TEST_F(TrainerTest, AdafactorWithGradientCheckpointingLearns) {
  TrainingSpec t = FastSpec();
  t.optim = "adafactor";
  t.max_steps = 60;
  t.warmup_steps = 6;
  t.eval_steps = 60;
  t.save_steps = 0;
  auto model = NewModel();
  ASSERT_TRUE(model->SetGradientCheckpointing(true).ok());
  Harness h = Make(t, model);
  ASSERT_NE(h.trainer, nullptr);
  ASSERT_TRUE(h.trainer->Train().ok());
  const std::vector<double> evals = sink_.EvalLosses();  // Steps 0 and 60.
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_LT(evals[1], evals[0] - 0.8) << out_.str();
}

// Two updates and checkpoint-2, without evaluation: the runs whose checkpoint a test resumes.
TrainingSpec TwoStepsSavedAtTwo() {
  TrainingSpec t = FastSpec();
  t.max_steps = 2;
  t.save_steps = 2;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  return t;
}

TEST_F(TrainerTest, ResumeRefusesACheckpointOfAnotherRun) {
  TrainingSpec t = TwoStepsSavedAtTwo();
  {
    Harness h = Make(t, NewModel());
    ASSERT_TRUE(h.trainer->Train().ok());
  }
  t.per_device_train_batch_size = 4;
  Harness h = Make(t, NewModel());
  absl::Status status = h.trainer->ResumeFrom((out_dir_ / "checkpoint-2").string());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("another batch size"));
  t.per_device_train_batch_size = 8;
  for (const auto& change : {+[](TrainingSpec& s) { s.group_by_length = true; },
                             +[](TrainingSpec& s) { s.train_sampling_strategy = "sequential"; },
                             +[](TrainingSpec& s) { s.dataloader_drop_last = true; },
                             +[](TrainingSpec& s) { s.data_seed = 7; }}) {
    TrainingSpec other = t;
    change(other);
    Harness h_other = Make(other, NewModel());
    status = h_other.trainer->ResumeFrom((out_dir_ / "checkpoint-2").string());
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr("data order"));
  }
  t.data_seed = t.seed;  // The same order as no data_seed: that checkpoint continues.
  Harness same = Make(t, NewModel());
  EXPECT_TRUE(same.trainer->ResumeFrom((out_dir_ / "checkpoint-2").string()).ok());
  t.data_seed.reset();
  fs::remove(out_dir_ / "checkpoint-2" / "optimizer.pt");
  Harness again = Make(t, NewModel());
  status = again.trainer->ResumeFrom((out_dir_ / "checkpoint-2").string());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("optimizer.pt"));
}

TEST_F(TrainerTest, ResumeRefusesAStateFileWhoseCountsAreNotIntegers) {
  const TrainingSpec t = TwoStepsSavedAtTwo();
  ASSERT_TRUE(Make(t, NewModel()).trainer->Train().ok());
  const fs::path state = out_dir_ / "checkpoint-2" / "lmtrain_state.json";
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(state));
  for (const auto& [key, value] : {std::pair<const char*, nlohmann::json>{"global_step", 1e30},
                                   {"total_samples", 2.5},
                                   {"data_seed", "7"}}) {
    nlohmann::json bad = j;
    bad[key] = value;
    std::ofstream(state, std::ios::trunc) << bad.dump();
    const absl::Status status = Make(t, NewModel()).trainer->ResumeFrom(state.parent_path());
    EXPECT_TRUE(absl::IsDataLoss(status)) << key << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(std::string("\"") + key + "\" is missing or not"));
  }
}

// torch_empty_cache_steps empties the CUDA allocator's cache (CudaTrainerTest checks that); on
// the CPU it changes nothing: the same weights as without it.
TEST_F(TrainerTest, TorchEmptyCacheStepsChangesNothingOnTheCpu) {
  TrainingSpec t = TwoStepsSavedAtTwo();
  t.save_steps = 0;
  auto plain = NewModel();
  ASSERT_TRUE(Make(t, plain).trainer->Train().ok());
  t.torch_empty_cache_steps = 1;
  auto emptied = NewModel();
  ASSERT_TRUE(Make(t, emptied).trainer->Train().ok());
  ExpectSameWeights(plain->HfStateDict(), emptied->HfStateDict());
}

TEST_F(TrainerTest, GradientAccumulationEqualsTheBigBatch) {
  TrainingSpec t = FastSpec();
  t.max_steps = 1;
  t.warmup_steps = 0;
  t.eval_on_start = false;
  t.do_eval = false;
  t.save_steps = 0;
  // Adam's first update is lr * g / (|g| + eps): with eps 1e-8 it turns float summation-order
  // noise in near-zero gradients (an attention key bias's are zero in exact arithmetic) into
  // differences of order lr. A larger eps keeps the update linear in such gradients, so the
  // comparison checks what it means to: the accumulated gradient equals the big batch's.
  t.adam_epsilon = 1e-3;
  auto run = [&](int batch, int accumulation) {
    t.per_device_train_batch_size = batch;
    t.gradient_accumulation_steps = accumulation;
    auto model = NewModel(/*dropout=*/0.0);
    Harness h = Make(t, model);
    EXPECT_TRUE(h.trainer != nullptr && h.trainer->Train().ok());
    return model->HfStateDict();
  };
  const NamedTensors big = run(8, 1);
  const NamedTensors accumulated = run(4, 2);  // Same 8 examples: same permutation, cut in two.
  ASSERT_EQ(big.size(), accumulated.size());
  for (size_t i = 0; i < big.size(); ++i) {
    EXPECT_TRUE(torch::allclose(big[i].second, accumulated[i].second, 1e-5, 1e-6)) << big[i].first;
  }
}

TEST_F(TrainerTest, StopFlagEndsTrainingAtTheNextStepBoundary) {
  std::atomic<bool> stop{false};
  sink_.stop_on_first_log = &stop;
  TrainingSpec t = FastSpec();
  t.logging_steps = 3;
  t.eval_on_start = false;
  Harness h = Make(t, NewModel(), &stop);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->stopped);
  EXPECT_EQ(outcome->summary.step, 3);
  // A stopped job keeps its place: a checkpoint at the step it stopped at.
  EXPECT_TRUE(fs::exists(out_dir_ / "checkpoint-3" / "lmtrain_state.json"));
}

TEST_F(TrainerTest, StopSavesNothingWithSaveStrategyNo) {
  std::atomic<bool> stop{false};
  sink_.stop_on_first_log = &stop;
  TrainingSpec t = FastSpec();
  t.logging_steps = 3;
  t.eval_on_start = false;
  t.save_strategy = "no";
  Harness h = Make(t, NewModel(), &stop);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->stopped);
  EXPECT_FALSE(fs::exists(out_dir_ / "checkpoint-3"));
}

TEST_F(TrainerTest, NanLossStopsWithTheStep) {
  TrainingSpec t = FastSpec();
  t.eval_on_start = false;
  ByteTokenizer bytes;
  ClmExamples data;
  data.train = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  Harness h = Make(t, std::make_shared<NanLossModel>(), data, &bytes);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  EXPECT_THAT(outcome.status().message(), HasSubstr("loss is nan at step 1"));
}

TEST_F(TrainerTest, TorchErrorsBecomeStatusesWithStepAndShape) {
  TrainingSpec t = FastSpec();
  t.eval_on_start = false;
  t.per_device_train_batch_size = 2;
  ClmExamples data;
  data.train = {TokenIds(8, 5000), TokenIds(8, 5000)};  // Beyond the 1000-token vocabulary.
  Harness h = Make(t, NewModel(), data, tokenizer_);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outcome.status().message(), HasSubstr("training step 1 (input_ids [2, 8])"));
}

TEST_F(TrainerTest, Bf16AutocastStillLearns) {
  TrainingSpec t = FastSpec();
  t.bf16 = true;
  t.max_steps = 60;
  t.warmup_steps = 6;
  t.eval_steps = 60;
  t.save_steps = 0;
  Harness h = Make(t, NewModel());
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  const std::vector<double> evals = sink_.EvalLosses();
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_LT(evals[1], evals[0] - 0.8) << out_.str();
}

TEST_F(TrainerTest, Gpt2DecaysWeightsButNotBiasesOrLayerNorms) {
  const WeightDecayGroups groups = SplitWeightDecayGroups(*NewModel());
  EXPECT_EQ(groups.decay_names.size(), 10u);     // wte, wpe, 4 Conv1D weights x 2 layers
  EXPECT_EQ(groups.no_decay_names.size(), 18u);  // 5 LayerNorms x 2 + 4 biases x 2 layers
  for (const std::string& name : groups.no_decay_names) {
    EXPECT_TRUE(name.find(".ln_") != std::string::npos || name.find("bias") != std::string::npos)
        << name;
  }
  for (const std::string& name : groups.decay_names) {
    EXPECT_EQ(name.find(".ln_"), std::string::npos) << name;
  }
}

TEST_F(TrainerTest, LineByLineExamplesTrainWithPadding) {
  DataSpec data;
  data.train_file = kData + "austen_train.txt";
  data.validation_file = kData + "austen_valid.txt";
  data.line_by_line = true;
  auto examples = BuildClmExamples(data, *tokenizer_, 64, /*max_eval_samples=*/64);
  ASSERT_TRUE(examples.ok()) << examples.status();
  TrainingSpec t = FastSpec();
  t.max_steps = 20;
  t.eval_steps = 20;
  t.save_steps = 0;
  Harness h = Make(t, NewModel(), *std::move(examples), tokenizer_);
  ASSERT_NE(h.trainer, nullptr);
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  const std::vector<double> evals = sink_.EvalLosses();
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_TRUE(std::isfinite(evals[1]));
  EXPECT_LT(evals[1], evals[0]);
}

// Early stopping with a threshold no evaluation can beat: the first evaluation sets the best,
// each later one counts, and training ends (normally) at the patience-th of them.
TrainingSpec EarlyStoppingSpec() {
  TrainingSpec t = FastSpec();
  t.max_steps = 60;
  t.eval_on_start = false;
  t.eval_steps = 10;
  t.save_steps = 10;
  t.load_best_model_at_end = true;
  t.early_stopping_patience = 2;
  t.early_stopping_threshold = 1e9;
  return t;
}

TEST_F(TrainerTest, EarlyStoppingEndsAfterPatienceEvaluationsWithoutImprovement) {
  Harness h = Make(EarlyStoppingSpec(), NewModel());
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->stopped);        // A normal end, not a stop request.
  EXPECT_EQ(outcome->summary.step, 30);  // Evaluations at 10 (the best), 20 and 30.
  EXPECT_EQ(sink_.EvalLosses().size(), 3u);
  EXPECT_THAT(out_.str(), HasSubstr("Early stopping at step 30"));
  ASSERT_TRUE(h.trainer->Evaluate().ok());  // A final evaluation counts for nothing.
  EXPECT_EQ(out_.str().find("Early stopping"), out_.str().rfind("Early stopping"));
  // The end is a normal one: the best checkpoint (by eval_loss alone) is loaded back.
  EXPECT_THAT(out_.str(), HasSubstr("Loading best model from " + out_dir_.string()));
  EXPECT_FALSE(fs::exists(out_dir_ / "checkpoint-40"));
}

TEST_F(TrainerTest, EarlyStoppingCountResumesWithTheCheckpoint) {
  const TrainingSpec t = EarlyStoppingSpec();
  auto straight = NewModel();
  ASSERT_TRUE(Make(t, straight).trainer->Train().ok());  // Stops at 30.
  auto resumed = NewModel();
  Harness h = Make(t, resumed);
  // checkpoint-20 holds one evaluation without improvement: one more ends the run at 30, not 40.
  ASSERT_TRUE(h.trainer->ResumeFrom((out_dir_ / "checkpoint-20").string()).ok());
  auto outcome = h.trainer->Train();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->summary.step, 30);
  ExpectSameWeights(straight->HfStateDict(), resumed->HfStateDict());
}

}  // namespace
}  // namespace lmtrain
