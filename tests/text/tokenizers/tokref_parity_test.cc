// Parity with Hugging Face on every reference file of the shared tokref folder
// ($LMTRAIN_TOKREF_DIR, else <source>/../shared/data/tokref; label fidelity):
// <stem>.jsonl and <stem>.pairs.jsonl run against the tokenizer folder of
// <stem> (see TokenizerDirForStem). Skipped when the folder is absent.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "tests/text/tokenizers/tokref_check.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

using tokenizer_testing::CheckTokrefFile;
using tokenizer_testing::TokenizerDirForStem;
using tokenizer_testing::TokrefDir;

std::vector<std::filesystem::path> ReferenceFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(TokrefDir())) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "bert-base-uncased" for bert-base-uncased.jsonl and .pairs.jsonl.
std::string Stem(const std::filesystem::path& file) {
  std::string stem = file.stem().string();
  const std::string pairs = ".pairs";
  if (stem.size() > pairs.size() &&
      stem.compare(stem.size() - pairs.size(), pairs.size(), pairs) == 0) {
    stem.resize(stem.size() - pairs.size());
  }
  return stem;
}

TEST(TokrefParityTest, EveryReferenceFileMatchesHuggingFace) {
  if (!std::filesystem::is_directory(TokrefDir())) {
    GTEST_SKIP() << TokrefDir() << " not found; set LMTRAIN_TOKREF_DIR to the tokref folder";
  }
  int checked = 0;
  for (const auto& file : ReferenceFiles()) {
    const auto dir = TokenizerDirForStem(Stem(file));
    if (!dir) {
      std::cout << "[ SKIPPED  ] " << file << ": no tokenizer folder for " << Stem(file) << "\n";
      continue;
    }
    auto tokenizer = LoadTokenizer(*dir);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    const auto stats = CheckTokrefFile(**tokenizer, file.string());
    std::cout << "[  PARITY  ] " << file.filename().string() << " with " << *dir << ": "
              << stats.matched << "/" << stats.total << " (" << stats.Percent() << "%)\n";
    EXPECT_EQ(stats.matched, stats.total) << file;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no reference file has a known tokenizer";
}

// The same files through the shared folder's tokenizer.json (HF's single-file
// format), which TokenizerDirForStem passes over when the repo ships files.
TEST(TokrefParityTest, SharedTokenizerJsonFilesMatchHuggingFace) {
  if (!std::filesystem::is_directory(TokrefDir())) {
    GTEST_SKIP() << TokrefDir() << " not found; set LMTRAIN_TOKREF_DIR";
  }
  int checked = 0;
  for (const auto& file : ReferenceFiles()) {
    const std::string json = TokrefDir() + "/../tokenizers/" + Stem(file) + "/tokenizer.json";
    if (!std::filesystem::exists(json)) continue;
    auto tokenizer = LoadTokenizer(json);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    const auto stats = CheckTokrefFile(**tokenizer, file.string());
    std::cout << "[  PARITY  ] " << file.filename().string() << " with " << json << ": "
              << stats.matched << "/" << stats.total << "\n";
    EXPECT_EQ(stats.matched, stats.total) << file;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no tokenizer.json beside the reference";
}

}  // namespace
}  // namespace lmtrain
