// YamlOut writes what YAML::Emitter writes for the same calls, byte for byte: hand-picked
// shapes, seeded random documents, and every example job file through the job spec's writers.
#include "common/internal/yaml_out.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/internal/job_spec_fields.h"
#include "common/job_spec.h"
#include "tests/test_paths.h"

namespace lmtrain::internal {
namespace {

TEST(YamlOutTest, NestedAndEmptyMappingsFlowSequencesAndScalars) {
  YamlOut out;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "bench";
  out << YAML::Key << "empty" << YAML::Value << "";
  out << YAML::Key << "none" << YAML::Value << YAML::Null;
  out << YAML::Key << "n" << YAML::Value << -7LL;
  out << YAML::Key << "u" << YAML::Value << 18446744073709551615ULL;
  out << YAML::Key << "section" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kwargs" << YAML::Value << YAML::BeginMap << YAML::EndMap;
  out << YAML::Key << "quoted" << YAML::Value << YAML::DoubleQuoted << "gpt2";
  out << YAML::Key << "list" << YAML::Value << YAML::Flow << YAML::BeginSeq << 1LL << YAML::Null
      << YAML::DoubleQuoted << "a" << YAML::Flow << YAML::BeginSeq << YAML::EndSeq << YAML::Flow
      << YAML::BeginSeq << 2LL << 3LL << YAML::EndSeq << YAML::EndSeq;
  out << YAML::Key << "deeper" << YAML::Value << YAML::BeginMap << YAML::Key << "x" << YAML::Value
      << "5e-05" << YAML::EndMap;
  out << YAML::EndMap;
  out << YAML::Key << "last" << YAML::Value << YAML::BeginMap << YAML::EndMap;
  out << YAML::EndMap;
  EXPECT_EQ(out.str(), out.ViaYamlCpp());
  EXPECT_NE(out.str().find("    {}"), std::string::npos) << out.str();
}

TEST(YamlOutTest, LoneNodes) {
  for (int shape = 0; shape < 5; ++shape) {
    YamlOut out;
    if (shape == 0) out << "word";
    if (shape == 1) out << YAML::Null;
    if (shape == 2) out << 42LL;
    if (shape == 3) out << YAML::BeginMap << YAML::EndMap;
    if (shape == 4) out << YAML::Flow << YAML::BeginSeq << "a" << YAML::EndSeq;
    EXPECT_EQ(out.str(), out.ViaYamlCpp()) << "shape " << shape;
  }
}

// Strings YAML::Emitter quotes or escapes, and shapes the direct path leaves to it.
TEST(YamlOutTest, AnythingElseMatchesToo) {
  const std::vector<std::string> words = {
      "a b", "-",   "-x",  ".hidden",     "null",        "Null",      "~",           "x: y", "#c",
      "a#b", "yes", "no",  "caf\xc3\xa9", "tab\there",   "q\"uote",   "back\\slash", "[x]",  "{x}",
      "a,b", "",    "---", "1.5",         "line\nbreak", "trailing ", " leading"};
  for (const std::string& w : words) {
    YamlOut out;
    out << YAML::BeginMap << YAML::Key << "k" << YAML::Value << w << YAML::Key << "q" << YAML::Value
        << YAML::DoubleQuoted << w << YAML::Key << "s" << YAML::Value << YAML::Flow
        << YAML::BeginSeq << w << YAML::EndSeq;
    if (!w.empty()) out << YAML::Key << w << YAML::Value << 1LL;
    out << YAML::EndMap;
    EXPECT_EQ(out.str(), out.ViaYamlCpp()) << "word '" << w << "'";
  }
  YamlOut block_seq;  // A block sequence, and a mapping inside a flow sequence.
  block_seq << YAML::BeginMap << YAML::Key << "a" << YAML::Value << YAML::BeginSeq << "x"
            << YAML::EndSeq << YAML::Key << "b" << YAML::Value << YAML::Flow << YAML::BeginSeq
            << YAML::BeginMap << YAML::Key << "c" << YAML::Value << 1LL << YAML::EndMap
            << YAML::EndSeq << YAML::EndMap;
  EXPECT_EQ(block_seq.str(), block_seq.ViaYamlCpp());
}

// Random documents: nested mappings and flow sequences of words both kinds.
class RandomDocument {
 public:
  explicit RandomDocument(uint32_t seed) : rng_(seed) {}
  void Map(YamlOut& out, int depth) {
    out << YAML::BeginMap;
    const int n = Pick(5);
    for (int i = 0; i < n; ++i) {
      out << YAML::Key << Word() << YAML::Value;
      Value(out, depth + 1, /*in_flow=*/false);
    }
    out << YAML::EndMap;
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string Word() {
    static const std::vector<std::string> kWords = {
        "model_type", "n_embd", "a.b", "x/y.txt", "/tmp/data/train.txt",
        "5e-05",      "1.0",    "0",   "linear",  "",
        "no",         "true",   "a b", "-1",      "null",
        "x:y",        "gpt2",   "+3",  "A_B",     "-",
        "caf\xc3\xa9"};
    // Mostly simple words, so that most documents take the direct path.
    return kWords[Pick(Pick(4) == 0 ? kWords.size() : 12)];
  }
  void Value(YamlOut& out, int depth, bool in_flow) {
    switch (Pick(depth > 3 ? 5 : 7)) {
      case 0:
        out << Word();
        break;
      case 1:
        out << static_cast<long long>(Pick(2000) - 1000);
        break;
      case 2:
        out << YAML::Null;
        break;
      case 3:
        out << YAML::DoubleQuoted << Word();
        break;
      case 4:
        out << static_cast<unsigned long>(Pick(100));
        break;
      case 5:
        out << YAML::Flow << YAML::BeginSeq;
        for (int i = Pick(4); i > 0; --i) Value(out, depth + 1, /*in_flow=*/true);
        out << YAML::EndSeq;
        break;
      default:
        if (in_flow) {
          out << Word();
        } else {
          Map(out, depth);
        }
    }
  }
  std::mt19937 rng_;
};

TEST(YamlOutTest, RandomDocumentsMatchYamlCpp) {
  for (uint32_t seed = 1; seed <= 20000; ++seed) {
    YamlOut out;
    RandomDocument(seed).Map(out, 0);
    ASSERT_EQ(out.str(), out.ViaYamlCpp()) << "seed " << seed;
  }
}

TEST(YamlOutTest, ExampleJobFilesMatchYamlCpp) {
  const std::filesystem::path examples = std::filesystem::path(LMTRAIN_SOURCE_DIR) / "examples";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(examples)) {
    if (entry.path().filename() != "job.yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ParseOptions options;
    options.base_dir = entry.path().parent_path().string();
    options.check_files = false;
    absl::StatusOr<JobSpec> spec = ParseJobSpec(text.str(), options);
    ASSERT_TRUE(spec.ok()) << entry.path() << ": " << spec.status();
    YamlOut out;
    out << YAML::BeginMap;
    WriteTable(out, TopLevelFields(), *spec);
    out << YAML::EndMap;
    EXPECT_EQ(out.str(), out.ViaYamlCpp()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 5);
}

}  // namespace
}  // namespace lmtrain::internal
