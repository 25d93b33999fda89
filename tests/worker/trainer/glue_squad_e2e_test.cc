// run_glue.py and run_qa.py parity through the real lm-train process, on the small GLUE-format
// files of tests/testdata/glue_small and the SQuAD v2.0 files of tests/testdata/squad: a tiny
// BERT (bert-base-uncased's vocabulary) trains for a few steps, then the metrics lm-train
// reports are checked against tests/worker/trainer/hf/glue_squad_reference.py (numpy formulas of HF
// evaluate's "glue" metric, transformers' own SQuAD v2 scoring) over the predictions it wrote,
// and the output files are checked against the names and formats HF's scripts write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
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
using testing_child::Child;
using testing_child::ReadFile;

const std::string kSource = LMTRAIN_SOURCE_DIR;
const std::string kGlue = kSource + "/tests/testdata/glue_small/";
const std::string kSquad = kSource + "/tests/testdata/squad/";
const std::string kReference = kSource + "/tests/worker/trainer/hf/glue_squad_reference.py";

// A tiny BERT and the bert-base-uncased tokenizer, a few quick updates, no checkpoints.
std::string Job(const std::string& task, const std::string& data, const std::string& training) {
  return "name: hf-parity\ntask: " + task +
         "\nmodel: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 2, "
         "num_attention_heads: 2, intermediate_size: 64, max_position_embeddings: 128}}\n"
         "tokenizer: {path: " +
         kSource + "/tests/data/tokenizers/bert-base-uncased}\ndata: " + data +
         "\ntraining: {per_device_train_batch_size: 8, "
         "per_device_eval_batch_size: 8, save_strategy: \"no\", seed: 7, logging_steps: 4, " +
         training + "}\n";
}

class GlueSquadTest : public LmTrainTest {
 protected:
  // Runs lm-train on `yaml` into dir_/`name`; false (with the stderr) when it fails.
  bool Run(const std::string& name, const std::string& yaml) {
    const fs::path dir = dir_ / name;
    fs::create_directories(dir);
    std::ofstream(dir / "job.yaml") << yaml;
    Child child(dir, dir / "job.yaml");
    EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    const int code = child.Wait();
    EXPECT_EQ(code, 0) << ReadFile(dir / "stderr.txt");
    return code == 0;
  }
  nlohmann::json Results(const std::string& name, const std::string& file) {
    return nlohmann::json::parse(ReadFile(dir_ / name / "out" / file));
  }
  // The reference script's output (its last line, JSON), or null when the Python environment
  // or one of the modules the script imports (numpy, transformers) is missing: the comparison
  // is then skipped.
  nlohmann::json Reference(const std::string& arguments) {
    if (access(lmtrain_test_python(), X_OK) != 0) return nullptr;
    std::string output;
    const int code = testing::RunTestPython(kReference + " " + arguments, &output);
    if (code != 0 && output.find("ModuleNotFoundError") != std::string::npos) return nullptr;
    EXPECT_EQ(code, 0) << output;
    return nlohmann::json::parse(output.substr(output.rfind('\n', output.size() - 2) + 1));
  }
};

// The rows of a submission / predict_results file: header, then index and prediction.
std::vector<std::pair<std::string, std::string>> Rows(const fs::path& path, std::string* header) {
  std::ifstream in(path);
  std::getline(in, *header);
  std::vector<std::pair<std::string, std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    rows.emplace_back(line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1));
  }
  return rows;
}

// MNLI as run_glue: training, then evaluation of dev_matched and dev_mismatched (the second as
// *_mm metrics in eval_results.json), then predictions for both test sets in the GLUE
// submission files MNLI-m.tsv and MNLI-mm.tsv (index, label name).
TEST_F(GlueSquadTest, MnliEvaluatesBothDevSetsAndWritesBothSubmissions) {
  ASSERT_TRUE(Run("mnli", Job("glue", "{task_name: mnli, data_dir: " + kGlue + "MNLI}",
                              "learning_rate: 1.0e-3, num_train_epochs: 2, do_predict: true")));
  const nlohmann::json eval = Results("mnli", "eval_results.json");
  for (const char* key : {"eval_accuracy", "eval_accuracy_mm", "eval_loss", "eval_loss_mm"}) {
    ASSERT_TRUE(eval.contains(key)) << key << " missing from " << eval.dump();
  }
  for (const char* key : {"eval_accuracy", "eval_accuracy_mm"}) {  // 16 dev pairs each.
    const double correct = eval[key].get<double>() * 16;
    EXPECT_NEAR(correct, std::round(correct), 1e-9) << key;
  }
  const std::set<std::string> labels = {"contradiction", "entailment", "neutral"};
  for (const char* file : {"MNLI-m.tsv", "MNLI-mm.tsv"}) {
    std::string header;
    const auto rows = Rows(dir_ / "mnli" / "out" / file, &header);
    EXPECT_EQ(header, "index\tprediction") << file;
    ASSERT_EQ(rows.size(), 8u) << file;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].first, std::to_string(i)) << file;
      EXPECT_TRUE(labels.count(rows[i].second)) << file << ": " << rows[i].second;
    }
  }
  // predict_results.txt holds the matched test set's predictions, as MNLI-m.tsv.
  EXPECT_EQ(ReadFile(dir_ / "mnli" / "out" / "predict_results.txt"),
            ReadFile(dir_ / "mnli" / "out" / "MNLI-m.tsv"));
}

// One GLUE task from its train and dev files; do_predict then predicts the dev set (there is no
// test file), so predict_results.txt holds the predictions the eval metrics were computed on.
class GlueMetricsTest : public GlueSquadTest {
 protected:
  // Trains `task` from glue_small/`folder` with `training` (learning rate, epochs); returns
  // eval_results.json and the reference script's metrics for the predictions (null without
  // numpy).
  std::pair<nlohmann::json, nlohmann::json> TrainAndScore(const std::string& task,
                                                          const std::string& folder,
                                                          const std::string& training) {
    const std::string dev = kGlue + folder + "/dev.tsv";
    if (!Run(task, Job("glue",
                       "{task_name: " + task + ", train_file: " + kGlue + folder +
                           "/train.tsv, validation_file: " + dev + "}",
                       training + ", do_predict: true"))) {
      return {};
    }
    const fs::path predicted = dir_ / task / "out" / "predict_results.txt";
    // Trained long enough (about 2 seconds) that the predictions differ, so that the metrics
    // are not those of a constant prediction.
    std::string header;
    std::set<std::string> distinct;
    for (const auto& [index, prediction] : Rows(predicted, &header)) distinct.insert(prediction);
    EXPECT_GT(distinct.size(), 1u) << task << ": one prediction for every dev example";
    return {Results(task, "eval_results.json"),
            Reference("glue " + task + " " + dev + " " + predicted.string())};
  }
};

TEST_F(GlueMetricsTest, ColaReportsMatthewsCorrelation) {
  const auto [eval, reference] =
      TrainAndScore("cola", "CoLA", "learning_rate: 3.0e-3, num_train_epochs: 20");
  ASSERT_TRUE(eval.contains("eval_matthews_correlation")) << eval.dump();
  EXPECT_FALSE(eval.contains("eval_accuracy"));  // evaluate's glue metric for cola: MCC only.
  if (reference.is_null()) GTEST_SKIP() << "no numpy in " << lmtrain_test_python();
  EXPECT_NEAR(eval["eval_matthews_correlation"].get<double>(),
              reference["matthews_correlation"].get<double>(), 1e-9);
}

TEST_F(GlueMetricsTest, QqpReportsAccuracyF1AndTheirMean) {
  const auto [eval, reference] =
      TrainAndScore("qqp", "QQP", "learning_rate: 1.0e-3, num_train_epochs: 20");
  for (const char* key : {"eval_accuracy", "eval_f1", "eval_combined_score"}) {
    ASSERT_TRUE(eval.contains(key)) << key << " missing from " << eval.dump();
  }
  if (reference.is_null()) GTEST_SKIP() << "no numpy in " << lmtrain_test_python();
  for (const char* key : {"accuracy", "f1", "combined_score"}) {
    EXPECT_NEAR(eval[std::string("eval_") + key].get<double>(), reference[key].get<double>(), 1e-9)
        << key;
  }
}

// STS-B is a regression: one output, MSE loss, Pearson / Spearman and their mean. The
// predictions in predict_results.txt are rounded to 3 decimals, hence the tolerances.
TEST_F(GlueMetricsTest, StsbIsARegressionWithPearsonSpearmanAndMseLoss) {
  const auto [eval, reference] =
      TrainAndScore("stsb", "STS-B", "learning_rate: 3.0e-3, num_train_epochs: 20");
  for (const char* key : {"eval_pearson", "eval_spearmanr", "eval_combined_score", "eval_loss"}) {
    ASSERT_TRUE(eval.contains(key)) << key << " missing from " << eval.dump();
  }
  const auto config = nlohmann::json::parse(ReadFile(dir_ / "stsb" / "out" / "config.json"));
  EXPECT_EQ(config["num_labels"], 1);
  EXPECT_FALSE(config.contains("id2label") && config["id2label"].size() > 1);
  EXPECT_NEAR(eval["eval_combined_score"].get<double>(),
              (eval["eval_pearson"].get<double>() + eval["eval_spearmanr"].get<double>()) / 2,
              1e-12);
  if (reference.is_null()) GTEST_SKIP() << "no numpy in " << lmtrain_test_python();
  // Rounding each prediction by at most 5e-4 moves a correlation by about 2 * 5e-4 / std of the
  // predictions at most.
  const double spread = reference["prediction_std"].get<double>();
  ASSERT_GT(spread, 0.0);
  const double rounding = std::max(2e-3, 2 * 5e-4 / spread);
  EXPECT_NEAR(eval["eval_pearson"].get<double>(), reference["pearson"].get<double>(), rounding)
      << "predictions' standard deviation " << spread;
  EXPECT_NEAR(eval["eval_spearmanr"].get<double>(), reference["spearmanr"].get<double>(), 2e-2);
  EXPECT_NEAR(eval["eval_loss"].get<double>(), reference["mse"].get<double>(),
              1e-2 * reference["mse"].get<double>() + 1e-3);
}

// The SQuAD v2 job of the test below: the first 96 training questions and 64 dev questions (10
// of them unanswerable); `model` and `extra` (data keys) vary between its two runs.
std::string SquadV2Job(const std::string& model, const std::string& tokenizer,
                       const std::string& extra, const std::string& training) {
  return "name: squad-v2\ntask: qa\nmodel: " + model + "\ntokenizer: {path: " + tokenizer +
         "}\ndata: {train_file: " + kSquad + "train-v2.0.json, validation_file: " + kSquad +
         "dev-v2.0.json, version_2_with_negative: true, max_seq_length: 128, doc_stride: 32, "
         "max_train_samples: 96" +
         extra +
         "}\ntraining: {learning_rate: 1.0e-3, per_device_train_batch_size: 16, "
         "per_device_eval_batch_size: 32, save_strategy: \"no\", seed: 7, max_eval_samples: 64, " +
         training + "}\n";
}

// Checks run_qa's v2 outputs in `out`: the files, the metric keys, "" exactly for the questions
// whose null score beats the best span by more than `threshold`, and the metrics against
// transformers' SQuAD v2 scoring of eval_predictions.json. Returns the null odds.
nlohmann::json CheckSquadV2Run(const fs::path& out, double threshold,
                               const nlohmann::json& reference) {
  for (const char* file :
       {"eval_predictions.json", "eval_nbest_predictions.json", "eval_null_odds.json"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  const auto eval = nlohmann::json::parse(ReadFile(out / "eval_results.json"));
  for (const char* key : {"exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                          "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                          "best_exact_thresh", "best_f1", "best_f1_thresh"}) {
    const std::string name = std::string("eval_") + key;
    EXPECT_TRUE(eval.contains(name)) << name << " missing from " << eval.dump();
    if (!reference.is_null() && eval.contains(name)) {
      EXPECT_NEAR(eval[name].get<double>(), reference[key].get<double>(), 1e-6) << key;
    }
  }
  EXPECT_EQ(eval.value("eval_total", 0.0), 64);
  EXPECT_EQ(eval.value("eval_NoAns_total", 0.0), 10);
  const auto predictions = nlohmann::json::parse(ReadFile(out / "eval_predictions.json"));
  const auto odds = nlohmann::json::parse(ReadFile(out / "eval_null_odds.json"));
  EXPECT_EQ(predictions.size(), 64u);
  for (const auto& [id, text] : predictions.items()) {
    EXPECT_EQ(text.get<std::string>().empty(), odds.at(id).get<double>() > threshold) << id;
  }
  return odds;
}

// SQuAD v2 as run_qa with --version_2_with_negative: unanswerable questions train towards CLS,
// a question gets the null answer "" when its null score beats the best span by more than
// null_score_diff_threshold, and evaluate's squad_v2 metrics come back with the eval_ prefix.
// The trained model is then evaluated again with the threshold at the median null-score
// difference, so that about half the answers turn null.
TEST_F(GlueSquadTest, SquadV2PredictsNullAnswersByTheThreshold) {
  const std::string tokenizer = kSource + "/tests/data/tokenizers/bert-base-uncased";
  ASSERT_TRUE(Run("train", SquadV2Job("{config: {model_type: bert, hidden_size: 32, "
                                      "num_hidden_layers: 2, num_attention_heads: 2, "
                                      "intermediate_size: 64, max_position_embeddings: 128}}",
                                      tokenizer, "", "num_train_epochs: 1")));
  const fs::path first = dir_ / "train" / "out";
  const auto odds = nlohmann::json::parse(ReadFile(first / "eval_null_odds.json"));
  std::vector<double> diffs;
  for (const auto& [id, value] : odds.items()) diffs.push_back(value.get<double>());
  ASSERT_FALSE(diffs.empty());
  std::sort(diffs.begin(), diffs.end());
  const double median = diffs[diffs.size() / 2];
  std::ostringstream threshold;
  threshold.precision(17);
  threshold << median;
  ASSERT_TRUE(Run("threshold", SquadV2Job("{name_or_path: " + first.string() + "}", first.string(),
                                          ", null_score_diff_threshold: " + threshold.str(),
                                          "do_train: false")));
  const fs::path second = dir_ / "threshold" / "out";
  const nlohmann::json reference =
      Reference("squad " + kSquad + "dev-v2.0.json " + (first / "eval_predictions.json").string() +
                " " + (second / "eval_predictions.json").string());
  CheckSquadV2Run(first, 0.0, reference.is_null() ? reference : reference[0]);
  const nlohmann::json again =
      CheckSquadV2Run(second, median, reference.is_null() ? reference : reference[1]);
  const auto predictions = nlohmann::json::parse(ReadFile(second / "eval_predictions.json"));
  int null = 0;
  for (const auto& [id, text] : predictions.items()) null += text.get<std::string>().empty();
  EXPECT_GT(null, 16);  // Above the median only: about half, ties aside.
  EXPECT_LT(null, 64);
  for (const auto& [id, value] : odds.items()) {  // The same model gives the same scores.
    EXPECT_NEAR(again.at(id).get<double>(), value.get<double>(), 1e-4) << id;
  }
}

}  // namespace
}  // namespace lmtrain
