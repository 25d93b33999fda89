// Every fine-tuning task through the real stack (lm-server + lm-worker + lm-train on loopback,
// SQLite, real data shipped in tests/testdata and examples/data), each against its baseline:
//   mlm / clm       eval perplexity at least 30% below the untrained model's (step 0)
//   classification  Brown 3-genre accuracy >= majority class + 10 points
//   glue (mrpc)     KJV/WEB paraphrase accuracy >= majority class + 10 points, fine-tuned from
//                   a small in-domain pretrained base model; predict_results.txt, MRPC.tsv
//   qa              exact match on held-out questions well above an untrained model's 0
// Models are tiny and, except the paraphrase one, trained from scratch with the real
// bert-base-uncased WordPiece vocabulary, so each job takes a minute or two on 2 cores.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

const std::string kBert =
    "{model_type: bert, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, "
    "intermediate_size: 128, max_position_embeddings: 128}";

std::string Tokenizer() { return SourceDir() + "/tests/data/tokenizers/bert-base-uncased"; }
std::string TestData(const std::string& path) { return SourceDir() + "/tests/testdata/" + path; }

struct Outcome {
  v1::Job job;
  std::vector<v1::Metrics> evals;  // Every streamed evaluation, in order.
};

// Submits `yaml` (written into the cluster's folder) and follows it to the end.
Outcome RunJob(Cluster& cluster, const std::string& name, const std::string& yaml) {
  const fs::path file = cluster.dir() / name / "job.yaml";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << yaml;
  JobClient client(cluster.address());
  Outcome outcome;
  auto id = client.Submit(file.string(), "");
  EXPECT_TRUE(id.ok()) << id.status();
  if (!id.ok()) return outcome;
  EXPECT_TRUE(client
                  .Watch(*id, 0,
                         [&](const v1::JobEvent& e) {
                           if (e.has_metrics() && (e.metrics().has_eval_loss() ||
                                                   !e.metrics().eval_metrics().empty())) {
                             outcome.evals.push_back(e.metrics());
                           }
                         })
                  .ok());
  auto job = client.Get(*id);
  EXPECT_TRUE(job.ok()) << job.status();
  if (job.ok()) outcome.job = *job;
  return outcome;
}

double Metric(const v1::Metrics& m, const std::string& name) {
  auto it = m.eval_metrics().find(name);
  EXPECT_NE(it, m.eval_metrics().end()) << "no " << name;
  return it == m.eval_metrics().end() ? -1 : it->second;
}

// Share of the most frequent label in column `column` (negative: counted from the end) of a
// delimited file with a header.
double MajorityShare(const std::string& path, char delimiter, int column) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // Header.
  std::map<std::string, int> counts;
  int total = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, delimiter);) cells.push_back(cell);
    // Negative: from the end (a CSV text cell may hold commas; the label is last).
    const int index = column < 0 ? static_cast<int>(cells.size()) + column : column;
    ++counts[cells.at(index)];
    ++total;
  }
  int best = 0;
  for (const auto& [label, count] : counts) best = std::max(best, count);
  return static_cast<double>(best) / total;
}

class TasksEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = Cluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(TasksEndToEnd, MlmLowersHeldOutPerplexityByAThird) {
  const std::string data = SourceDir() + "/examples/data/";
  const Outcome run =
      RunJob(*cluster_, "mlm",
             absl::StrCat("name: mlm-austen\ntask: mlm\nmodel: {config: ", kBert, "}\n",
                          "tokenizer: {path: ", Tokenizer(), "}\n", "data: {train_file: ", data,
                          "austen_train.txt, validation_file: ", data,
                          "austen_valid.txt, max_seq_length: 64}\n",
                          "training: {learning_rate: 2.0e-3, per_device_train_batch_size: 16, "
                          "max_steps: 200, warmup_steps: 20, logging_steps: 20, "
                          "evaluation_strategy: steps, eval_steps: 100, eval_on_start: true, "
                          "save_steps: 100, seed: 1, max_eval_samples: 128}\n"));
  ASSERT_EQ(run.job.state(), v1::SUCCEEDED) << run.job.error();
  ASSERT_GE(run.evals.size(), 2u);
  const double start = run.evals.front().perplexity();
  const double end = run.evals.back().perplexity();
  EXPECT_LT(end, 0.7 * start) << "perplexity " << start << " -> " << end;
}

TEST_F(TasksEndToEnd, ClmLowersHeldOutPerplexityByAThird) {
  const std::string data = SourceDir() + "/examples/data/";
  const Outcome run =
      RunJob(*cluster_, "clm",
             absl::StrCat("name: clm-austen\ntask: clm\n",
                          "model: {config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 64, "
                          "n_positions: 64}}\n",
                          "tokenizer: {train: {type: bpe, vocab_size: 1000}}\n",
                          "data: {train_file: ", data, "austen_train.txt, validation_file: ", data,
                          "austen_valid.txt, block_size: 64, line_by_line: false}\n",
                          "training: {learning_rate: 3.0e-3, per_device_train_batch_size: 8, "
                          "max_steps: 150, warmup_steps: 15, logging_steps: 25, "
                          "evaluation_strategy: steps, eval_steps: 75, eval_on_start: true, "
                          "save_strategy: \"no\", seed: 1, max_eval_samples: 64}\n"));
  ASSERT_EQ(run.job.state(), v1::SUCCEEDED) << run.job.error();
  ASSERT_GE(run.evals.size(), 2u);
  EXPECT_LT(run.evals.back().perplexity(), 0.7 * run.evals.front().perplexity());
}

TEST_F(TasksEndToEnd, BrownGenresBeatTheMajorityClassByTenPoints) {
  const double majority = MajorityShare(TestData("brown3/validation.csv"), ',', -1);
  const Outcome run = RunJob(
      *cluster_, "brown3",
      absl::StrCat("name: brown3\ntask: classification\nmodel: {config: ", kBert, "}\n",
                   "tokenizer: {path: ", Tokenizer(), "}\n",
                   "data: {train_file: ", TestData("brown3/train.csv"), ", validation_file: ",
                   TestData("brown3/validation.csv"), ", max_seq_length: 64}\n",
                   "training: {learning_rate: 1.0e-3, per_device_train_batch_size: 16, "
                   "num_train_epochs: 4, warmup_ratio: 0.1, logging_steps: 20, "
                   "evaluation_strategy: epoch, save_strategy: epoch, save_total_limit: 1, "
                   "load_best_model_at_end: true, seed: 1, per_device_eval_batch_size: 64}\n"));
  ASSERT_EQ(run.job.state(), v1::SUCCEEDED) << run.job.error();
  ASSERT_FALSE(run.evals.empty());
  EXPECT_GE(Metric(run.evals.back(), "eval_accuracy"), majority + 0.10)
      << "majority class share " << majority;
}

// The GLUE path end to end on the MRPC-format KJV/WEB paraphrase set, as a user fine-tunes a
// pretrained model: the base model in tests/testdata/paraphrase/base-model was pretrained by
// scripts/make_paraphrase_base_model.sh (lm-train's masked LM on aligned verse pairs from the
// train chapters only). Fine-tune, evaluate with MRPC's metrics against the majority class + 10
// points, predict the test split into predict_results.txt and the submission MRPC.tsv. (From
// scratch, a model of this size memorises the 1000 pairs and stays near 0.5 on dev.)
TEST_F(TasksEndToEnd, PretrainedParaphraseBeatsTheMajorityClassAndWritesTheSubmission) {
  const double majority = MajorityShare(TestData("paraphrase/dev.tsv"), '\t', 0);
  const std::string base = TestData("paraphrase/base-model");
  const Outcome run =
      RunJob(*cluster_, "paraphrase",
             absl::StrCat("name: kjv-web-paraphrase\ntask: glue\nmodel: {name_or_path: ", base,
                          "}\ntokenizer: {path: ", base, "}\n",
                          "data: {task_name: mrpc, data_dir: ", TestData("paraphrase"),
                          ", max_seq_length: 128}\n",
                          "training: {learning_rate: 3.0e-4, per_device_train_batch_size: 16, "
                          "num_train_epochs: 5, warmup_ratio: 0.1, logging_steps: 20, "
                          "evaluation_strategy: epoch, save_strategy: \"no\", seed: 1, "
                          "per_device_eval_batch_size: 64, do_predict: true}\n"));
  ASSERT_EQ(run.job.state(), v1::SUCCEEDED) << run.job.error();
  ASSERT_FALSE(run.evals.empty());
  const v1::Metrics& last = run.evals.back();
  const double accuracy = Metric(last, "eval_accuracy");
  EXPECT_GE(accuracy, majority + 0.10) << "majority class share " << majority;
  std::cout << "paraphrase dev accuracy " << accuracy << " (majority " << majority << ")\n";
  EXPECT_NEAR(Metric(last, "eval_combined_score"), (accuracy + Metric(last, "eval_f1")) / 2, 1e-9);
  const fs::path out = cluster_->dir() / "data" / "artifacts" / "jobs" / run.job.id();
  std::ifstream submission(out / "MRPC.tsv");
  ASSERT_TRUE(submission) << "no MRPC.tsv in " << out;
  std::string header, row;
  std::getline(submission, header);
  EXPECT_EQ(header, "index\tprediction");
  int rows = 0;
  while (std::getline(submission, row)) ++rows;
  EXPECT_EQ(rows, 100);  // tests/testdata/paraphrase/test.tsv
  EXPECT_TRUE(fs::exists(out / "predict_results.txt"));
  std::ifstream config(out / "config.json");
  const auto json = nlohmann::json::parse(config);
  EXPECT_EQ(json["id2label"]["0"], "0");
  EXPECT_EQ(json["architectures"][0], "BertForSequenceClassification");
}

TEST_F(TasksEndToEnd, SquadStyleQaAnswersHeldOutQuestions) {
  const Outcome run =
      RunJob(*cluster_, "qa",
             absl::StrCat("name: austen-qa\ntask: qa\nmodel: {config: ", kBert, "}\n",
                          "tokenizer: {path: ", Tokenizer(), "}\n",
                          "data: {train_file: ", TestData("squad/train-v1.1.json"),
                          ", validation_file: ", TestData("squad/dev-v1.1.json"),
                          ", max_seq_length: 128, doc_stride: 32}\n",
                          "training: {learning_rate: 1.0e-3, per_device_train_batch_size: 16, "
                          "num_train_epochs: 4, warmup_ratio: 0.1, logging_steps: 20, "
                          "evaluation_strategy: epoch, save_strategy: \"no\", seed: 1, "
                          "per_device_eval_batch_size: 64}\n"));
  ASSERT_EQ(run.job.state(), v1::SUCCEEDED) << run.job.error();
  ASSERT_FALSE(run.evals.empty());
  EXPECT_GE(Metric(run.evals.back(), "eval_exact_match"), 20.0);
  EXPECT_GE(Metric(run.evals.back(), "eval_f1"), Metric(run.evals.back(), "eval_exact_match"));
}

}  // namespace
}  // namespace lmtrain::testing
