// The Trainer over a ClmTask on a tiny GPT-2 and a sentencepiece tokenizer trained on Jane
// Austen (examples/data): the fixture of the trainer tests, on the CPU and on CUDA.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "worker/trainer/clm_task.h"
#include "worker/trainer/trainer.h"

namespace lmtrain {

namespace fs = std::filesystem;

inline const std::string kData = std::string(LMTRAIN_SOURCE_DIR) + "/examples/data/";

// Records events; optionally raises a stop flag when the first training log arrives.
class RecordingSink : public EventSink {
 public:
  absl::Status Emit(const TrainerEvent& event) override {
    events.push_back(event);
    if (stop_on_first_log != nullptr && event.metrics.loss.has_value()) {
      stop_on_first_log->store(true);
    }
    return absl::OkStatus();
  }
  std::vector<double> EvalLosses() const {
    std::vector<double> losses;
    for (const auto& e : events) {
      if (e.metrics.eval_loss.has_value()) losses.push_back(*e.metrics.eval_loss);
    }
    return losses;
  }
  std::vector<TrainerEvent> events;
  std::atomic<bool>* stop_on_first_log = nullptr;
};

// Every weight of `a` equals `b`'s bit for bit; a failure names the tensor and how far it is off.
inline void ExpectSameWeights(const NamedTensors& a, const NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second))
        << a[i].first << " differs by up to "
        << (a[i].second - b[i].second).abs().max().item<double>();
  }
}

inline nlohmann::json TinyGpt2(int vocab_size, double dropout = 0.1) {
  return {{"model_type", "gpt2"},   {"n_layer", 2},          {"n_head", 2},
          {"n_embd", 64},           {"n_positions", 64},     {"vocab_size", vocab_size},
          {"resid_pdrop", dropout}, {"embd_pdrop", dropout}, {"attn_pdrop", dropout}};
}

inline TrainingSpec FastSpec() {
  TrainingSpec t;
  t.learning_rate = 3e-3;
  t.per_device_train_batch_size = 8;
  t.per_device_eval_batch_size = 16;
  t.max_steps = 150;
  t.warmup_steps = 15;
  t.weight_decay = 0.01;
  t.logging_steps = 25;
  t.eval_steps = 75;
  t.save_steps = 75;
  t.eval_on_start = true;
  t.evaluation_strategy = "steps";
  return t;
}

// A ClmTask and the Trainer over it (the trainer borrows the task).
struct Harness {
  std::unique_ptr<ClmTask> task;
  std::unique_ptr<Trainer> trainer;
};

class TrainerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    torch::set_num_threads(1);  // Tiny ops: one thread is fastest, and robust on a busy box.
    const std::string dir = ::testing::TempDir() + "/trainer_test_tokenizer";
    fs::create_directories(dir);
    SentencePieceTrainOptions options;
    options.vocab_size = 1000;
    auto tokenizer = TrainSentencePiece(kData + "austen_train.txt", dir + "/spiece.model", options);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = tokenizer->release();
    DataSpec data;
    data.train_file = kData + "austen_train.txt";
    data.validation_file = kData + "austen_valid.txt";
    auto examples = BuildClmExamples(data, *tokenizer_, /*block_size=*/64, /*max_eval_samples=*/64);
    ASSERT_TRUE(examples.ok()) << examples.status();
    examples_ = new ClmExamples(*std::move(examples));
  }

  void SetUp() override {
    out_dir_ =
        fs::path(::testing::TempDir()) /
        ("trainer-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(out_dir_);
    fs::create_directories(out_dir_);
    checkpoints_ =
        std::make_unique<CheckpointWriter>(CheckpointWriter::Options{out_dir_.string(), 0});
  }

  std::shared_ptr<CausalLmModel> NewModel(double dropout = 0.1) {
    torch::manual_seed(42);
    auto model = CreateCausalLm(TinyGpt2(tokenizer_->VocabSize(), dropout));
    EXPECT_TRUE(model.ok()) << model.status();
    (*model)->to(device_);  // Initialised on the CPU, as lm-train does.
    return *model;
  }

  Harness Make(const TrainingSpec& training, std::shared_ptr<CausalLmModel> model,
               ClmExamples examples, const Tokenizer* tokenizer,
               const std::atomic<bool>* stop = nullptr) {
    Harness h;
    const int32_t pad = tokenizer->PadId().value_or(0);
    h.task = std::make_unique<ClmTask>(std::move(model), std::move(examples), pad);
    Trainer::Options options;
    options.training = training;
    options.output_dir = out_dir_.string();
    options.stop_requested = stop;
    auto trainer =
        Trainer::Create(options, h.task.get(), tokenizer, &reporter_, checkpoints_.get());
    EXPECT_TRUE(trainer.ok()) << trainer.status();
    if (trainer.ok()) h.trainer = *std::move(trainer);
    return h;
  }
  Harness Make(const TrainingSpec& training, std::shared_ptr<CausalLmModel> model,
               const std::atomic<bool>* stop = nullptr) {
    return Make(training, std::move(model), *examples_, tokenizer_, stop);
  }

  // Trains `t` on a fresh model in out_dir_ with a stop requested once `logs` training logs
  // have arrived (at update `logs` with logging_steps 1), as SIGTERM stops lm-train; the
  // outcome of Train().
  absl::StatusOr<Trainer::TrainOutcome> TrainUntilStoppedAtLog(const TrainingSpec& t, int logs) {
    std::atomic<bool> stop{false};
    struct StopAt : EventSink {
      std::atomic<bool>* flag = nullptr;
      int seen = 0, at = 0;
      absl::Status Emit(const TrainerEvent& e) override {
        if (e.metrics.loss.has_value() && ++seen == at) flag->store(true);
        return absl::OkStatus();
      }
    } stop_sink;
    stop_sink.flag = &stop;
    stop_sink.at = logs;
    TrainingReporter reporter(&stop_sink, &out_, &err_);
    auto task = std::make_unique<ClmTask>(NewModel(), *examples_, *tokenizer_->PadId());
    Trainer::Options options;
    options.training = t;
    options.output_dir = out_dir_.string();
    options.stop_requested = &stop;
    auto trainer = Trainer::Create(options, task.get(), tokenizer_, &reporter, checkpoints_.get());
    if (!trainer.ok()) return trainer.status();
    return (*trainer)->Train();
  }

  // Trains `t` (which saves checkpoint-6) on a fresh model (dropout on), then another fresh
  // model resumed from checkpoint-6 to the end, and expects both to end bit for bit the same.
  void ExpectExactResume(const TrainingSpec& t) {
    auto straight = NewModel();
    ASSERT_TRUE(Make(t, straight).trainer->Train().ok());
    auto resumed = NewModel();
    torch::manual_seed(1234);  // The checkpoint's RNG states must take over.
    Harness h = Make(t, resumed);
    ASSERT_TRUE(h.trainer->ResumeFrom((out_dir_ / "checkpoint-6").string()).ok());
    ASSERT_TRUE(h.trainer->Train().ok());
    ExpectSameWeights(straight->HfStateDict(), resumed->HfStateDict());
  }

  static inline Tokenizer* tokenizer_ = nullptr;
  static inline ClmExamples* examples_ = nullptr;
  torch::Device device_ = torch::kCPU;  // Where NewModel puts the model.
  fs::path out_dir_;
  RecordingSink sink_;
  std::ostringstream out_, err_;
  TrainingReporter reporter_{&sink_, &out_, &err_};
  std::unique_ptr<CheckpointWriter> checkpoints_;  // Into out_dir_.
};

}  // namespace lmtrain
