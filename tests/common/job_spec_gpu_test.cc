// ParseJobSpec's GPU keys: resources.gpus_per_worker (one process per GPU), training.device and
// HF's use_cpu, HF's tf32, and the checks a scheduled job gets (fp16, tf32 and device cuda need
// a GPU).
#include <gtest/gtest.h>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;
using test_util::ProblemCount;

class JobSpecGpuTest : public test_util::JobSpecFixture {
 protected:
  // Lines 1-5; tests append training and resources sections from line 6.
  static constexpr char kBase[] = R"(name: ok
task: clm
model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, n_layer: 1}}
tokenizer: {train: {type: bpe, vocab_size: 100}}
data: {train_file: data/train.txt, block_size: 32}
)";
};

TEST_F(JobSpecGpuTest, GpusPerWorkerSetsOneProcessPerGpu) {
  absl::StatusOr<JobSpec> spec = Parse(std::string(kBase) + "resources:\n  workers: 2\n"
                                                            "  gpus_per_worker: 4\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->resources.gpus_per_worker, 4);
  EXPECT_EQ(spec->resources.slots_per_worker, 4);
  EXPECT_EQ(spec->resources.workers, 2);
}

TEST_F(JobSpecGpuTest, SlotsPerWorkerMustMatchTheGpus) {
  auto result = Parse(std::string(kBase) + "resources:\n  gpus_per_worker: 2\n"
                                           "  slots_per_worker: 3\n");
  EXPECT_TRUE(HasError(result, 8,
                       "resources.slots_per_worker must equal resources.gpus_per_worker (2) or be "
                       "left out: each process gets one GPU (got 3)"));
  EXPECT_EQ(ProblemCount(result), 1);
  EXPECT_TRUE(Parse(std::string(kBase) + "resources: {gpus_per_worker: 2, slots_per_worker: 2}\n")
                  .ok());
}

TEST_F(JobSpecGpuTest, TheOldDevicesKeyNamesItsReplacement) {
  auto result = Parse(std::string(kBase) + "resources:\n  priority: 1\n  devices: 1\n");
  EXPECT_TRUE(HasError(result, 8,
                       "resources.devices was replaced by resources.gpus_per_worker (GPUs on each "
                       "worker, one process per GPU); rename the key"));
  EXPECT_EQ(ProblemCount(result), 1);
}

TEST_F(JobSpecGpuTest, DeviceChoicesAndUseCpu) {
  auto cuda = Parse(std::string(kBase) + "training: {device: cuda}\n");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->training.device, "cuda");
  auto use_cpu = Parse(std::string(kBase) + "training: {use_cpu: true}\n");
  ASSERT_TRUE(use_cpu.ok()) << use_cpu.status();
  EXPECT_EQ(use_cpu->training.device, "cpu");
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training: {device: gpu}\n"), 6,
                       "training.device must be one of auto, cpu, cuda (got 'gpu')"));
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  device: cuda\n  use_cpu: true\n"),
                       8, "training.use_cpu: true conflicts with training.device: cuda"));
}

TEST_F(JobSpecGpuTest, Fp16OnCpuIsRefusedEverywhere) {
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  fp16: true\n  device: cpu\n"), 7,
                       "training.fp16 needs a GPU: training.device is cpu (use bf16: true on CPU)"));
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  use_cpu: yes\n  fp16: true\n"), 8,
                       "training.fp16 needs a GPU: training.use_cpu is true"));
}

// lm-train run alone decides at run time; under lm-server a job sees only the GPUs it asks for.
TEST_F(JobSpecGpuTest, CudaOptionsNeedGpusOnlyWhenScheduled) {
  const std::string fp16 = std::string(kBase) + "training:\n  fp16: true\n";
  EXPECT_TRUE(Parse(fp16).ok());
  auto refused = Parse(fp16, /*check_files=*/true, /*scheduled=*/true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "job.yaml:7: training.fp16 needs a GPU: set resources.gpus_per_worker > 0 (or use "
            "bf16: true on CPU)");
  EXPECT_TRUE(Parse(fp16 + "resources: {gpus_per_worker: 1}\n", true, true).ok());

  const std::string cuda = std::string(kBase) + "training:\n  device: cuda\n";
  EXPECT_TRUE(Parse(cuda).ok());
  EXPECT_TRUE(HasError(Parse(cuda, true, true), 7,
                       "training.device cuda needs a GPU: set resources.gpus_per_worker > 0"));
  EXPECT_TRUE(Parse(cuda + "resources: {gpus_per_worker: 2}\n", true, true).ok());
}

// HF's tf32: unset by default, true or false as given (round trip), true refused where no GPU
// can be used (HF's TrainingArguments raises there), false accepted anywhere.
TEST_F(JobSpecGpuTest, Tf32IsOptionalAndTrueNeedsAGpu) {
  auto plain = Parse(std::string(kBase));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->training.tf32.has_value());
  for (const bool value : {true, false}) {
    auto spec =
        Parse(std::string(kBase) + "training: {tf32: " + (value ? "true" : "false") + "}\n");
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->training.tf32, value);
    auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->training.tf32, value);
  }
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  device: cpu\n  tf32: true\n"), 8,
                       "training.tf32 needs a CUDA GPU (Ampere or newer): training.device is cpu"));
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  tf32: true\n  use_cpu: true\n"), 7,
                       "training.tf32 needs a CUDA GPU (Ampere or newer): training.use_cpu is "
                       "true"));
  const std::string tf32 = std::string(kBase) + "training:\n  tf32: true\n";
  EXPECT_TRUE(Parse(tf32).ok());
  EXPECT_TRUE(HasError(Parse(tf32, true, true), 7,
                       "training.tf32 needs a CUDA GPU (Ampere or newer): set "
                       "resources.gpus_per_worker > 0"));
  EXPECT_TRUE(Parse(tf32 + "resources: {gpus_per_worker: 1}\n", true, true).ok());
  EXPECT_TRUE(Parse(std::string(kBase) + "training: {device: cpu, tf32: false}\n").ok());
}

// training.cuda_graphs: what a captured update cannot hold is refused at parse, by key and line.
TEST_F(JobSpecGpuTest, CudaGraphsRefuseWhatCannotBeCaptured) {
  const std::string graphs = std::string(kBase) + "training:\n  cuda_graphs: true\n";
  auto plain = Parse(graphs);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->training.cuda_graphs);
  EXPECT_TRUE(Parse(graphs + "  bf16: true\nresources: {gpus_per_worker: 1}\n", true, true).ok());
  const auto refused = [&](const std::string& extra, const std::string& why) {
    return HasError(Parse(graphs + extra), 7, "training.cuda_graphs " + why);
  };
  EXPECT_TRUE(refused("  fp16: true\n", "captures bf16 or fp32 steps"));
  EXPECT_TRUE(refused("  gradient_accumulation_steps: 2\n", "needs gradient_accumulation_steps 1"));
  EXPECT_TRUE(refused("  gradient_checkpointing: true\n", "cannot capture gradient_checkpointing"));
  EXPECT_TRUE(refused("  optim: adafactor\n", "needs an AdamW optim"));
  EXPECT_TRUE(refused("  device: cpu\n", "needs a GPU"));
  EXPECT_TRUE(refused("resources: {workers: 2}\n", "trains one process"));
  EXPECT_TRUE(HasError(Parse(graphs, true, /*scheduled=*/true), 7,
                       "training.cuda_graphs needs a GPU (resources.gpus_per_worker > 0"));
  std::string qa = graphs;
  qa.replace(qa.find("task: clm"), 9, "task: qa");
  EXPECT_TRUE(
      HasError(Parse(qa), 7, "training.cuda_graphs captures clm and mlm steps only (task is qa)"));
}

TEST_F(JobSpecGpuTest, AutoFindBatchSizeTrainsOneProcess) {
  auto spec = Parse(std::string(kBase) + "training: {auto_find_batch_size: true}\n" +
                    "resources: {gpus_per_worker: 1}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->training.auto_find_batch_size);
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  auto_find_batch_size: true\n" +
                             "resources: {gpus_per_worker: 2}\n"),
                       7, "auto_find_batch_size trains one process (this job has 2"));
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  auto_find_batch_size: true\n" +
                             "resources: {workers: 3}\n"),
                       7, "(this job has 3: resources.workers × slots_per_worker)"));
}

TEST_F(JobSpecGpuTest, FullEvalDtypesAreOneAndFp16NeedsAGpu) {
  auto spec = Parse(std::string(kBase) + "training: {bf16_full_eval: true, device: cpu}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->training.bf16_full_eval);
  EXPECT_TRUE(Parse(std::string(kBase) + "training: {fp16_full_eval: true}\n").ok());
  EXPECT_TRUE(HasError(
      Parse(std::string(kBase) + "training:\n  bf16_full_eval: true\n  fp16_full_eval: true\n"), 8,
      "set at most one of bf16_full_eval and fp16_full_eval"));
  EXPECT_TRUE(HasError(
      Parse(std::string(kBase) + "training:\n  fp16_full_eval: true\n" + "  use_cpu: true\n"), 7,
      "training.fp16_full_eval needs a GPU: training.use_cpu is true"));
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  fp16_full_eval: true\n",
                             /*check_files=*/true, /*scheduled=*/true),
                       7,
                       "training.fp16_full_eval needs a GPU: set resources.gpus_per_worker > 0"));
}

TEST_F(JobSpecGpuTest, TorchEmptyCacheStepsIsUnsetOrPositive) {
  auto spec = Parse(std::string(kBase) + "training: {torch_empty_cache_steps: 4}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.torch_empty_cache_steps, 4);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->training.torch_empty_cache_steps, 4);
  spec = Parse(std::string(kBase) + "training: {torch_empty_cache_steps: null}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->training.torch_empty_cache_steps.has_value());
  EXPECT_TRUE(HasError(Parse(std::string(kBase) + "training:\n  torch_empty_cache_steps: 0\n"), 7,
                       "training.torch_empty_cache_steps"));
}

TEST_F(JobSpecGpuTest, RoundTripKeepsGpuKeys) {
  auto spec = Parse(std::string(kBase) +
                    "training: {fp16: true, device: cuda}\nresources: {workers: 2, "
                    "gpus_per_worker: 2}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string yaml = JobSpecToYaml(*spec);
  EXPECT_NE(yaml.find("gpus_per_worker: 2"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("devices"), std::string::npos) << yaml;
  ParseOptions options;
  options.scheduled = true;
  absl::StatusOr<JobSpec> again = ParseJobSpec(yaml, options);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << yaml;
  test_util::ExpectSpecsEqual(*spec, *again);
  EXPECT_EQ(JobSpecToYaml(*again), yaml);
}

}  // namespace
}  // namespace lmtrain
