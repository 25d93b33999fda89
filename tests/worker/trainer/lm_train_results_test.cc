// The results files of the real lm-train process on SQuAD. predict_results.json has HF's
// Trainer.predict speed metrics and run_qa's predict_samples. training.skip_memory_metrics:
// false: HF's
// memory metrics of each stage land where HF's Trainer puts them — init's and training's in
// train_results.json, the final training log and its printed line, the final evaluation's in
// eval_results.json, the predictions' ("test", HF's stage name) in predict_results.json — and
// by default none of them anywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::Not;
using testing_child::Child;
using testing_child::ReadFile;

nlohmann::json ReadJson(const fs::path& path) {
  return nlohmann::json::parse(ReadFile(path), nullptr, /*allow_exceptions=*/false);
}

// Runs SQuAD question answering (a tiny BERT) for 2 updates, then its evaluation and
// predictions (run_qa's predict_results.json), in `dir`; returns `dir`.
fs::path RunQa(const fs::path& dir, const std::string& training) {
  const std::string source = LMTRAIN_SOURCE_DIR;
  const std::string squad = source + "/tests/testdata/squad/dev-v1.1.json";
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml")
      << "name: memory\ntask: qa\n"
      << "model: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 2, "
         "num_attention_heads: 2, intermediate_size: 64, max_position_embeddings: 128}}\n"
      << "tokenizer: {path: " << source << "/tests/data/tokenizers/bert-base-uncased}\n"
      << "data: {train_file: " << squad << ", validation_file: " << squad
      << ", test_file: " << squad
      << ", max_seq_length: 128, doc_stride: 32, max_train_samples: 16, "
         "max_predict_samples: 8}\n"
      << "training: {per_device_train_batch_size: 8, max_steps: 2, save_strategy: \"no\", "
         "max_eval_samples: 8, do_predict: true, seed: 3"
      << training << "}\n";
  Child child(dir, dir / "job.yaml", {});
  EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(240)));
  EXPECT_EQ(child.Wait(), 0) << ReadFile(dir / "stderr.txt");
  return dir;
}

std::vector<std::string> MemoryKeys(const nlohmann::json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    if (key.find("_mem_") != std::string::npos) {
      EXPECT_TRUE(value.is_number_integer()) << key << " = " << value.dump();
      keys.push_back(key);
    }
  }
  return keys;
}

TEST_F(LmTrainTest, MemoryMetricsGoWhereHfPutsThem) {
  const fs::path dir = RunQa(dir_ / "measured", ", skip_memory_metrics: false");
  const nlohmann::json train = ReadJson(dir / "out" / "train_results.json");
  // On the CPU: host figures only (HF adds the _gpu_ ones when it has a GPU).
  EXPECT_THAT(MemoryKeys(train),
              ::testing::ElementsAre("before_init_mem_cpu", "init_mem_cpu_alloc_delta",
                                     "init_mem_cpu_peaked_delta", "train_mem_cpu_alloc_delta",
                                     "train_mem_cpu_peaked_delta"))
      << train.dump();
  // LibTorch and the loaded model were resident before the Trainer was built.
  EXPECT_GT(train["before_init_mem_cpu"].get<int64_t>(), int64_t{50} << 20);
  EXPECT_GE(train["train_mem_cpu_peaked_delta"].get<int64_t>(), 0);
  EXPECT_GE(train["init_mem_cpu_peaked_delta"].get<int64_t>(), 0);

  const nlohmann::json eval = ReadJson(dir / "out" / "eval_results.json");
  EXPECT_THAT(MemoryKeys(eval),
              ::testing::ElementsAre("eval_mem_cpu_alloc_delta", "eval_mem_cpu_peaked_delta"));
  const nlohmann::json predict = ReadJson(dir / "out" / "predict_results.json");
  EXPECT_THAT(MemoryKeys(predict),
              ::testing::ElementsAre("test_mem_cpu_alloc_delta", "test_mem_cpu_peaked_delta"));
  const nlohmann::json all = ReadJson(dir / "out" / "all_results.json");
  EXPECT_EQ(MemoryKeys(all).size(), 9u) << all.dump();

  // The final training log has them (not the evaluation's: HF measures after logging it), and
  // its printed line shows them as ints between train_loss and epoch.
  const nlohmann::json state = ReadJson(dir / "out" / "trainer_state.json");
  nlohmann::json summary;
  for (const nlohmann::json& entry : state["log_history"]) {
    if (entry.contains("train_loss")) summary = entry;
  }
  EXPECT_EQ(summary["train_mem_cpu_alloc_delta"], train["train_mem_cpu_alloc_delta"]);
  EXPECT_EQ(summary["before_init_mem_cpu"], train["before_init_mem_cpu"]);
  for (const nlohmann::json& entry : state["log_history"]) {
    EXPECT_FALSE(entry.contains("eval_mem_cpu_alloc_delta")) << entry.dump();
  }
  EXPECT_THAT(ReadFile(dir / "stdout.txt"),
              ContainsRegex("'train_loss': [0-9.]+, 'init_mem_cpu_alloc_delta': -?[0-9]+, "
                            "'init_mem_cpu_peaked_delta': [0-9]+, 'train_mem_cpu_alloc_delta': "
                            "-?[0-9]+, 'train_mem_cpu_peaked_delta': [0-9]+, "
                            "'before_init_mem_cpu': [0-9]+, 'epoch': "));
}

TEST_F(LmTrainTest, MemoryMetricsAreSkippedByDefault) {
  const fs::path dir = RunQa(dir_ / "default", "");
  // Predictions as run_qa reports them: SQuAD scores, HF's speed metrics of the prediction
  // loop, and the features predicted: the evaluation's, as the same 8 questions (some of them
  // two windows at 128 tokens), in batches of 8.
  const nlohmann::json predict = ReadJson(dir / "out" / "predict_results.json");
  for (const char* key : {"predict_exact_match", "predict_f1", "predict_runtime",
                          "predict_samples_per_second", "predict_steps_per_second"}) {
    EXPECT_TRUE(predict.contains(key) && predict[key].is_number()) << key << ": " << predict;
  }
  const int64_t features = predict["predict_samples"].get<int64_t>();
  EXPECT_GT(features, 8);
  EXPECT_EQ(features, ReadJson(dir / "out" / "eval_results.json")["eval_samples"]);
  const double runtime = predict["predict_runtime"].get<double>();
  ASSERT_GT(runtime, 0);
  // Rounded to 4 digits: the products hold to 5% above 2 ms.
  const double slack = runtime > 0.002 ? 0.05 : 1.0;
  EXPECT_NEAR(predict["predict_samples_per_second"].get<double>() * runtime / features, 1, slack);
  EXPECT_NEAR(predict["predict_steps_per_second"].get<double>() * runtime / ((features + 7) / 8), 1,
              slack);
  for (const char* file : {"train_results.json", "eval_results.json", "predict_results.json",
                           "all_results.json", "trainer_state.json"}) {
    EXPECT_THAT(ReadFile(dir / "out" / file), Not(::testing::HasSubstr("_mem_"))) << file;
  }
  EXPECT_THAT(ReadFile(dir / "stdout.txt"), Not(::testing::HasSubstr("_mem_")));
}

}  // namespace
}  // namespace lmtrain
