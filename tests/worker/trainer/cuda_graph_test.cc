// training.cuda_graphs: a captured and replayed update computes exactly what the same update
// computes eagerly (dropout included), the Trainer learns with it, follows its eager run, and
// resumes exactly; and everything that cannot be captured is refused with the reason. The CUDA
// tests skip with a message where no CUDA device is visible; the refusals run everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <memory>
#include <vector>

#include "tests/worker/trainer/trainer_fixture.h"
#include "worker/optim/fused_adamw.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/cuda_graph_step.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

TrainingSpec GraphSpec() {
  TrainingSpec t = FastSpec();
  t.max_steps = 12;
  t.warmup_steps = 2;
  t.eval_steps = 12;
  t.save_steps = 0;
  t.cuda_graphs = true;
  return t;
}

class CudaGraphTest : public TrainerTest {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device is visible";
    device_ = torch::Device(torch::kCUDA, 0);
    TrainerTest::SetUp();
  }

  // `updates` AdamW updates of a fresh tiny GPT-2 (dropout on) through CudaGraphStep with the
  // given warm-up, on fixed batches; returns the losses and leaves the weights in *state.
  std::vector<double> Updates(int warmup, int updates, NamedTensors* state, size_t* graphs) {
    auto model = NewModel(/*dropout=*/0.1);
    model->train();
    FusedAdamW adamw(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
    CudaGraphStep step(&adamw, /*max_grad_norm=*/1.0, warmup);
    const AutocastSpec bf16 = AutocastSpec::For(c10::DeviceType::CUDA, true, false);
    torch::manual_seed(7);
    std::vector<double> losses;
    for (int i = 0; i < updates; ++i) {
      const torch::Tensor ids = torch::randint(1000, {4, 32}, torch::kLong);
      const CudaGraphStep::Result r =
          step.Run({ids, torch::Tensor()}, [&](const std::vector<torch::Tensor>& in) {
            AutocastGuard autocast(bf16);
            return model->ForwardLoss(in[0], in[1], in[0]);
          });
      EXPECT_EQ(r.replayed, i >= warmup) << "update " << i;
      losses.push_back(r.loss);
    }
    *state = model->HfStateDict();
    *graphs = step.graphs();
    return losses;
  }
};

TEST_F(CudaGraphTest, ReplayedUpdatesEqualEagerOnes) {
  NamedTensors eager, graphed;
  size_t eager_graphs = 0, graphs = 0;
  const std::vector<double> a = Updates(/*warmup=*/100, 8, &eager, &eager_graphs);
  const std::vector<double> b = Updates(/*warmup=*/2, 8, &graphed, &graphs);
  EXPECT_EQ(eager_graphs, 0u);
  EXPECT_EQ(graphs, 1u);
  EXPECT_EQ(a, b);
  ExpectSameWeights(eager, graphed);
}

TEST_F(CudaGraphTest, TrainerLearnsWithCapturedUpdates) {
  TrainingSpec t = GraphSpec();
  t.bf16 = true;
  t.max_steps = 60;
  t.warmup_steps = 6;
  t.eval_steps = 60;
  Harness h = Make(t, NewModel());
  ASSERT_NE(h.trainer, nullptr);
  ASSERT_NE(h.trainer->graph_step(), nullptr);
  ASSERT_TRUE(h.trainer->Train().ok());
  EXPECT_GE(h.trainer->graph_step()->graphs(), 1u);
  const std::vector<double> evals = sink_.EvalLosses();
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_LT(evals[1], evals[0] - 0.8) << out_.str();
}

// The eager Trainer clips with LibTorch's per-tensor norms, the captured update with PyTorch's
// foreach kernels: the same run up to float rounding.
TEST_F(CudaGraphTest, CapturedTrainingFollowsTheEagerRun) {
  TrainingSpec t = GraphSpec();
  t.max_steps = 20;
  t.eval_steps = 20;
  Harness graphed = Make(t, NewModel(/*dropout=*/0.0));
  ASSERT_TRUE(graphed.trainer->Train().ok());
  const double graphed_loss = sink_.EvalLosses().back();
  sink_.events.clear();
  fs::remove_all(out_dir_);
  fs::create_directories(out_dir_);
  t.cuda_graphs = false;
  Harness eager = Make(t, NewModel(/*dropout=*/0.0));
  ASSERT_TRUE(eager.trainer->Train().ok());
  EXPECT_NEAR(graphed_loss, sink_.EvalLosses().back(), 1e-4);
}

TEST_F(CudaGraphTest, ResumedCapturedRunEqualsAnUninterruptedOne) {
  TrainingSpec t = GraphSpec();
  t.save_steps = 6;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  ExpectExactResume(t);  // With dropout: replays draw the eager numbers.
}

// On the CPU (CI too): the Trainer says why it cannot capture, and CudaGraphStep refuses.
TEST_F(TrainerTest, CudaGraphsNeedAModelOnAGpu) {
  ClmTask task(NewModel(), *examples_, tokenizer_->PadId().value_or(0));
  Trainer::Options options;
  options.training = GraphSpec();
  options.output_dir = out_dir_.string();
  auto trainer = Trainer::Create(options, &task, tokenizer_, &reporter_, checkpoints_.get());
  ASSERT_FALSE(trainer.ok());
  EXPECT_EQ(trainer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(trainer.status().message(),
              HasSubstr("training.cuda_graphs needs the model on a CUDA"));

  torch::Tensor p = torch::zeros({3}, torch::requires_grad());
  FusedAdamW adamw({p}, torch::optim::AdamWOptions(1e-3));
  CudaGraphStep step(&adamw, 1.0);
  try {
    step.Run({torch::ones({3})},
             [&](const std::vector<torch::Tensor>& in) { return (p * in[0]).sum(); });
    ADD_FAILURE() << "Run on the CPU did not throw";
  } catch (const c10::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUDA"));
  }
}

}  // namespace
}  // namespace lmtrain
