// `lm-train predict --fill-mask` end to end: on a masked LM a short lm-train run saved (the HF
// course's example sentence, checked for HF's output format), and on the hf-tiny fixture
// models against transformers' pipeline("fill-mask")
// (tests/worker/trainer/hf/fill_mask_pipeline.py; skipped without ../shared's fixtures or the
// .venv's transformers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/worker/models/hf_fixtures.h"
#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::kBinary;
using testing_child::kData;
using testing_child::ReadFile;

constexpr char kCourseText[] = "This is a great [MASK].";

// Runs `lm-train predict ARGS` (a shell word list); returns its exit code, with its stdout
// parsed into *out (null when it is not JSON) and its stderr in *err.
int Predict(const fs::path& dir, const std::string& args, nlohmann::json* out, std::string* err) {
  const fs::path out_file = dir / "predict.out", err_file = dir / "predict.err";
  const std::string command =
      kBinary + " predict " + args + " > " + out_file.string() + " 2> " + err_file.string();
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  *out = nlohmann::json::parse(ReadFile(out_file), nullptr, /*allow_exceptions=*/false);
  *err = ReadFile(err_file);
  return code;
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

// The format of HF's FillMaskPipeline for one mask: k entries of score, token, token_str and
// sequence, best first, with scores that are probabilities of distinct tokens.
void ExpectFillMaskFormat(const nlohmann::json& list, size_t k) {
  ASSERT_TRUE(list.is_array()) << list.dump();
  ASSERT_EQ(list.size(), k) << list.dump();
  double sum = 0, previous = 1;
  for (const nlohmann::json& entry : list) {
    ASSERT_TRUE(entry.contains("score") && entry.contains("token") && entry.contains("token_str") &&
                entry.contains("sequence"))
        << entry.dump();
    EXPECT_EQ(entry.size(), 4u) << entry.dump();
    const double score = entry["score"];
    EXPECT_GT(score, 0);
    EXPECT_LE(score, previous) << "scores must be sorted, best first";
    previous = score;
    sum += score;
    const std::string token_str = entry["token_str"];
    const std::string sequence = entry["sequence"];
    // The course sentence, lower-cased by bert-base-uncased, with the token in the mask's place.
    EXPECT_EQ(sequence.rfind("this is a great", 0), 0u) << sequence;
    EXPECT_THAT(sequence,
                HasSubstr(token_str.rfind("##", 0) == 0 ? token_str.substr(2) : token_str));
    EXPECT_THAT(sequence, ::testing::Not(HasSubstr("[MASK]")));
    EXPECT_THAT(sequence, ::testing::Not(HasSubstr("[CLS]")));
  }
  EXPECT_LE(sum, 1.0 + 1e-6);
}

TEST_F(LmTrainTest, FillMaskOnATrainedMaskedLm) {
  const fs::path job = dir_ / "mlm.yaml";
  std::ofstream(job) << "name: fill-mask\ntask: mlm\n"
                     << "model:\n  config: {model_type: bert, hidden_size: 32, "
                        "num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64, "
                        "max_position_embeddings: 64}\n"
                     << "tokenizer:\n  path: " << LMTRAIN_SOURCE_DIR
                     << "/tests/data/tokenizers/bert-base-uncased\n"
                     << "data:\n  train_file: " << kData << "austen_train.txt\n"
                     << "  max_seq_length: 32\n  whole_word_masking: true\n"
                     << "  wwm_probability: 0.2\n"
                     << "training:\n  max_steps: 4\n  learning_rate: 1.0e-3\n"
                     << "  per_device_train_batch_size: 4\n  do_eval: false\n";
  {
    Child child(dir_, job);
    ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(100)));
    ASSERT_EQ(child.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  }
  const std::string model = "--model " + (dir_ / "out").string();
  nlohmann::json out;
  std::string err;
  ASSERT_EQ(Predict(dir_, model + " --fill-mask " + Quoted(kCourseText), &out, &err), 0) << err;
  ExpectFillMaskFormat(out, 5);  // HF's default top_k.
  ASSERT_EQ(Predict(dir_, model + " --top-k 3 --fill-mask " + Quoted(kCourseText), &out, &err), 0)
      << err;
  ExpectFillMaskFormat(out, 3);
  // Two masks: one list per mask.
  ASSERT_EQ(Predict(dir_, model + " --top-k 2 --fill-mask '[MASK] is a great [MASK].'", &out, &err),
            0)
      << err;
  ASSERT_TRUE(out.is_array() && out.size() == 2 && out[0].size() == 2 && out[1].size() == 2)
      << out.dump();
  EXPECT_EQ(Predict(dir_, model + " --fill-mask 'no mask here'", &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("no mask token [MASK] in the text"));
}

// pipeline("fill-mask") computed by the .venv's transformers on a copy of `fixture` given a
// word-piece tokenizer (written to model_dir), one result per text; null on failure, with
// the reason in *error.
nlohmann::json HfPipeline(const std::string& fixture, const fs::path& model_dir, int top_k,
                          const std::vector<std::string>& texts, std::string* error) {
  std::string command = std::string(LMTRAIN_SOURCE_DIR) +
                        "/tests/worker/trainer/hf/fill_mask_pipeline.py " + fixture + " " +
                        model_dir.string() + " " + std::to_string(top_k);
  for (const std::string& text : texts) command += " " + Quoted(text);
  std::string output;
  const int status = testing::RunTestPython(command, &output);
  const size_t last = output.find_last_of('\n', output.size() - 2);  // JSON is the last line.
  nlohmann::json parsed = nlohmann::json::parse(
      last == std::string::npos ? output : output.substr(last + 1), nullptr, false);
  if (status != 0 || parsed.is_discarded()) {
    *error = output;
    return nullptr;
  }
  return parsed;
}

void ExpectSameFills(const nlohmann::json& ours, const nlohmann::json& hf) {
  ASSERT_EQ(ours.size(), hf.size()) << ours.dump() << "\n" << hf.dump();
  for (size_t i = 0; i < hf.size(); ++i) {
    SCOPED_TRACE("candidate " + std::to_string(i));
    EXPECT_EQ(ours[i]["token"], hf[i]["token"]);
    EXPECT_EQ(ours[i]["token_str"], hf[i]["token_str"]);
    EXPECT_EQ(ours[i]["sequence"], hf[i]["sequence"]);
    EXPECT_NEAR(ours[i]["score"].get<double>(), hf[i]["score"].get<double>(), 1e-4);
  }
}

TEST_F(LmTrainTest, FillMaskMatchesHfPipelineOnFixtures) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
  }
  const std::string root = testing::HfFixturesRoot();
  const std::vector<std::string> texts = {kCourseText, "[MASK] is a [MASK]."};
  for (const char* name : {"bert_mlm", "distilbert_mlm"}) {
    const std::string fixture = root + "/" + name;
    if (!fs::exists(fixture + "/model.safetensors")) GTEST_SKIP() << "no fixture " << fixture;
    const fs::path model_dir = dir_ / name;
    std::string error;
    const nlohmann::json all = HfPipeline(fixture, model_dir, 5, texts, &error);
    ASSERT_TRUE(all.is_array() && all.size() == texts.size()) << error << all.dump();
    for (size_t t = 0; t < texts.size(); ++t) {
      const std::string& text = texts[t];
      const nlohmann::json& hf = all[t];
      SCOPED_TRACE(std::string(name) + ": " + text);
      nlohmann::json ours;
      std::string err;
      ASSERT_EQ(
          Predict(dir_, "--model " + model_dir.string() + " --top-k 5 --fill-mask " + Quoted(text),
                  &ours, &err),
          0)
          << err;
      if (hf[0].is_array()) {  // Several masks: one list each.
        ASSERT_EQ(ours.size(), hf.size());
        for (size_t m = 0; m < hf.size(); ++m) ExpectSameFills(ours[m], hf[m]);
      } else {
        ExpectSameFills(ours, hf);
      }
    }
  }
}

}  // namespace
}  // namespace lmtrain
