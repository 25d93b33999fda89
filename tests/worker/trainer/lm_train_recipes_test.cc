// HF fine-tuning recipes through the real lm-train process: ELECTRA's (a classifier on an
// ElectraForPreTraining discriminator, layerwise_lr_decay) with the legacy scripts'
// eval_all_checkpoints, and reduce_lr_on_plateau with its state across a resume.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::ReadFile;

nlohmann::json ReadJson(const fs::path& path) {
  return nlohmann::json::parse(ReadFile(path), nullptr, /*allow_exceptions=*/false);
}

// The log_history entries of `out`/trainer_state.json that have `key`.
std::vector<nlohmann::json> Logs(const fs::path& out, const std::string& key) {
  std::vector<nlohmann::json> logs;
  const nlohmann::json state = ReadJson(out / "trainer_state.json");
  for (const auto& entry : state.value("log_history", nlohmann::json::array())) {
    if (entry.contains(key)) logs.push_back(entry);
  }
  return logs;
}

void RunToEnd(const fs::path& dir, const fs::path& job, std::vector<std::string> extra = {}) {
  Child child(dir, job, std::move(extra));
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(240)));
  ASSERT_EQ(child.Wait(), 0) << ReadFile(dir / "stderr.txt");
}

// ELECTRA's GLUE recipe: a classifier fine-tuned from a discriminator checkpoint saved by HF
// transformers, with layer-wise LR decay. The encoder starts from the discriminator's weights
// (its word embeddings sit near +0.5, far from any fresh initialisation), the loss drops, and
// eval_all_checkpoints evaluates both checkpoints as the legacy run_glue.py did.
TEST_F(LmTrainTest, ElectraDiscriminatorFineTunesWithLayerwiseDecayAndEvalAllCheckpoints) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
  }
  const std::string data = std::string(LMTRAIN_SOURCE_DIR) + "/tests/testdata/paraphrase";
  const fs::path disc = dir_ / "discriminator";
  std::string output;
  ASSERT_EQ(testing::RunTestPython(std::string(LMTRAIN_SOURCE_DIR) +
                                       "/tests/worker/trainer/hf/electra_discriminator.py " + data +
                                       "/base-model/vocab.txt " + disc.string(),
                                   &output),
            0)
      << output;
  const fs::path job = dir_ / "job.yaml";
  std::ofstream(job) << "name: electra\ntask: glue\n"
                     << "model: {name_or_path: " << disc.string() << "}\n"
                     << "tokenizer: {path: " << disc.string() << "}\n"
                     << "data: {task_name: mrpc, data_dir: " << data
                     << ", max_seq_length: 64, max_train_samples: 32}\n"
                     << "training: {learning_rate: 2.0e-3, layerwise_lr_decay: 0.8, "
                        "per_device_train_batch_size: 8, max_steps: 120, logging_steps: 8, "
                        "save_steps: 60, max_eval_samples: 32, per_device_eval_batch_size: 32, "
                        "eval_all_checkpoints: true, seed: 3}\n";
  RunToEnd(dir_, job);
  const fs::path out = dir_ / "out";

  const std::vector<nlohmann::json> logs = Logs(out, "loss");
  ASSERT_GE(logs.size(), 4u);
  const double first = (logs[0]["loss"].get<double>() + logs[1]["loss"].get<double>()) / 2;
  const double last =
      (logs[logs.size() - 1]["loss"].get<double>() + logs[logs.size() - 2]["loss"].get<double>()) /
      2;
  EXPECT_LT(last, first * 0.5) << "first " << first << ", last " << last;

  output.clear();
  ASSERT_EQ(testing::RunTestPython("-c 'import sys; from safetensors.torch import load_file; "
                                   "k = \"electra.embeddings.word_embeddings.weight\"; "
                                   "a = load_file(sys.argv[1])[k]; b = load_file(sys.argv[2])[k]; "
                                   "print(a.mean().item(), (a - b).abs().max().item())' " +
                                       (out / "model.safetensors").string() + " " +
                                       (disc / "model.safetensors").string(),
                                   &output),
            0)
      << output;
  double mean = 0, max_change = 1;
  std::istringstream(output) >> mean >> max_change;
  EXPECT_GT(mean, 0.45) << output;       // The discriminator's embeddings, not fresh ones.
  EXPECT_LT(max_change, 0.2) << output;  // Fine-tuned at lr * 0.8^3 for 120 steps.

  // checkpoint-N/eval_results.txt, "key = value" sorted, and the merged keys with "_N".
  const nlohmann::json results = ReadJson(out / "eval_results.json");
  for (const int step : {60, 120}) {
    const std::string text =
        ReadFile(out / ("checkpoint-" + std::to_string(step)) / "eval_results.txt");
    EXPECT_THAT(text, ::testing::StartsWith("eval_accuracy = ")) << text;
    EXPECT_THAT(text, HasSubstr("\neval_f1 = "));
    EXPECT_THAT(text, HasSubstr("\neval_loss = "));
    EXPECT_TRUE(results.contains("eval_accuracy_" + std::to_string(step))) << results.dump();
    EXPECT_TRUE(results.contains("eval_loss_" + std::to_string(step))) << results.dump();
  }
  // checkpoint-120 holds the final weights: the same loss as the final evaluation.
  EXPECT_NEAR(results["eval_loss_120"].get<double>(), results["eval_loss"].get<double>(), 1e-6);
  EXPECT_NE(results["eval_loss_60"].get<double>(), results["eval_loss_120"].get<double>());
  EXPECT_TRUE(ReadJson(out / "all_results.json").contains("eval_f1_60"));
}

// reduce_lr_on_plateau steps on each evaluation's metric. With mode max on eval_loss (which
// falls), every evaluation after the first is a bad one: patience 0 halves the rate at each.
// Its state is in the checkpoint: a run resumed at step 4 logs the same rates as the
// uninterrupted one.
TEST_F(LmTrainTest, ReduceLrOnPlateauHalvesOnBadEvaluationsAndResumes) {
  const fs::path job =
      TinyJob("job.yaml",
              "  learning_rate: 1.0e-3\n  max_steps: 8\n  logging_steps: 1\n  eval_steps: 2\n"
              "  save_steps: 4\n  max_eval_samples: 8\n  lr_scheduler_type: reduce_lr_on_plateau\n"
              "  lr_scheduler_kwargs: {mode: max, patience: 0, factor: 0.5}\n");
  RunToEnd(dir_, job);
  const fs::path out = dir_ / "out";
  std::vector<double> rates;
  for (const nlohmann::json& log : Logs(out, "loss")) rates.push_back(log["learning_rate"]);
  // Evaluations at 2 (the first: the best so far), 4, 6, 8; each log comes before its step's
  // evaluation, so the rate halved at step 4 shows from step 5.
  EXPECT_THAT(rates, ::testing::ElementsAre(1e-3, 1e-3, 1e-3, 1e-3, 5e-4, 5e-4, 2.5e-4, 2.5e-4))
      << ReadFile(out / "trainer_state.json");
  const nlohmann::json state = ReadJson(out / "checkpoint-4" / "lmtrain_state.json");
  ASSERT_TRUE(state.contains("lr_scheduler")) << state.dump();
  EXPECT_EQ(state["lr_scheduler"]["lr"], 5e-4);

  // Resume from checkpoint-4 alone: steps 5-8 see the reduced rates again.
  fs::remove_all(out / "checkpoint-8");
  RunToEnd(dir_, job, {"--resume"});
  std::vector<double> resumed;
  for (const nlohmann::json& log : Logs(out, "loss")) resumed.push_back(log["learning_rate"]);
  EXPECT_EQ(resumed, rates);
}

// dataloader_drop_last on GLUE: training on 16 examples in batches of 8 leaves nothing out, the
// evaluation of 20 examples in batches of 8 leaves out the last 4 (HF's evaluation dataloader
// does too): its loss and metrics are those of a run that evaluates the first 16 (and
// tokenizes on two threads, data.preprocessing_num_workers: the same features). Predictions
// still cover every test row.
TEST_F(LmTrainTest, GlueDropLastEvaluatesFullBatchesAndPredictsEveryRow) {
  const std::string data = std::string(LMTRAIN_SOURCE_DIR) + "/tests/testdata/paraphrase";
  const auto run = [&](const std::string& name, const std::string& evaluation,
                       const std::string& data_extra) {
    const fs::path dir = dir_ / name;
    fs::create_directories(dir);
    std::ofstream(dir / "job.yaml")
        << "name: " << name << "\ntask: glue\n"
        << "model: {name_or_path: " << data << "/base-model}\n"
        << "tokenizer: {path: " << data << "/base-model}\n"
        << "data: {task_name: mrpc, data_dir: " << data
        << ", max_seq_length: 64, max_train_samples: 16, max_predict_samples: 12" << data_extra
        << "}\n"
        << "training: {learning_rate: 1.0e-3, per_device_train_batch_size: 8, max_steps: 4, "
           "save_strategy: \"no\", per_device_eval_batch_size: 8, do_predict: true, seed: 3, "
        << evaluation << "}\n";
    RunToEnd(dir, dir / "job.yaml");
    return dir / "out";
  };
  const fs::path dropped = run("dropped", "max_eval_samples: 20, dataloader_drop_last: true", "");
  const fs::path first16 = run("first16", "max_eval_samples: 16", ", preprocessing_num_workers: 2");
  const nlohmann::json a = ReadJson(dropped / "eval_results.json");
  const nlohmann::json b = ReadJson(first16 / "eval_results.json");
  EXPECT_EQ(a["eval_samples"], 16) << a.dump();
  for (const char* key : {"eval_loss", "eval_accuracy", "eval_f1"}) {
    EXPECT_EQ(a[key], b[key]) << key << ": " << a.dump() << " against " << b.dump();
  }
  const std::string predictions = ReadFile(dropped / "predict_results.txt");
  EXPECT_EQ(std::count(predictions.begin(), predictions.end(), '\n'), 13) << predictions;
}

}  // namespace
}  // namespace lmtrain
