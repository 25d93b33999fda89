#include "text/dataset_cache/cache_key.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/text/dataset_cache/temp_dir.h"

namespace lmtrain {
namespace {

using testing_internal::TempDir;

class CacheKeyTest : public ::testing::Test {
 protected:
  CacheKeyTest() {
    inputs_.data_files = {dir_.Write("train.txt", "hello world\n")};
    const std::string tok = dir_.File("tok");
    std::filesystem::create_directories(tok);
    dir_.Write("tok/vocab.txt", "[PAD]\n[UNK]\nhello\n");
    dir_.Write("tok/model.safetensors", "weights");
    inputs_.tokenizer_files = *TokenizerFilesIn(tok);
    inputs_.preprocessing_version = "mlm-examples-1";
    inputs_.options = {{"max_seq_length", 128}, {"line_by_line", false}};
  }

  std::string Key(const CacheKeyInputs& inputs) {
    absl::StatusOr<std::string> key = ComputeCacheKey(inputs);
    EXPECT_TRUE(key.ok()) << key.status();
    return key.value_or("");
  }

  TempDir dir_;
  CacheKeyInputs inputs_;
};

TEST_F(CacheKeyTest, IsStableHexAndValid) {
  const std::string key = Key(inputs_);
  EXPECT_TRUE(IsValidCacheKey(key)) << key;
  EXPECT_EQ(Key(inputs_), key);
}

TEST_F(CacheKeyTest, ChangesWithDataFileContentNotPath) {
  const std::string key = Key(inputs_);
  TempDir other;
  CacheKeyInputs moved = inputs_;
  moved.data_files = {other.Write("renamed.txt", "hello world\n")};
  EXPECT_EQ(Key(moved), key);
  testing_internal::WriteAll(inputs_.data_files[0], "hello world!\n");
  EXPECT_NE(Key(inputs_), key);
}

TEST_F(CacheKeyTest, DataFileOrderMatters) {
  CacheKeyInputs two = inputs_;
  two.data_files.push_back(dir_.Write("more.txt", "more\n"));
  CacheKeyInputs swapped = two;
  std::swap(swapped.data_files[0], swapped.data_files[1]);
  EXPECT_NE(Key(two), Key(swapped));
}

TEST_F(CacheKeyTest, ChangesWithOptions) {
  const std::string key = Key(inputs_);
  CacheKeyInputs changed = inputs_;
  changed.options["max_seq_length"] = 64;
  EXPECT_NE(Key(changed), key);
  changed = inputs_;
  changed.options["line_by_line"] = true;
  EXPECT_NE(Key(changed), key);
  changed = inputs_;
  changed.preprocessing_version = "mlm-examples-2";
  EXPECT_NE(Key(changed), key);
}

TEST_F(CacheKeyTest, OptionKeyOrderDoesNotMatter) {
  CacheKeyInputs reordered = inputs_;
  reordered.options = nlohmann::json::object();
  reordered.options["line_by_line"] = false;
  reordered.options["max_seq_length"] = 128;
  EXPECT_EQ(Key(reordered), Key(inputs_));
}

TEST_F(CacheKeyTest, ChangesWithTokenizerFilesOnlyTheTokenizerOnes) {
  const std::string key = Key(inputs_);
  ASSERT_EQ(inputs_.tokenizer_files.size(), 1u);  // model.safetensors is not a tokenizer file.
  dir_.Write("tok/model.safetensors", "other weights");
  EXPECT_EQ(Key(inputs_), key);
  dir_.Write("tok/vocab.txt", "[PAD]\n[UNK]\nhello\nworld\n");
  EXPECT_NE(Key(inputs_), key);
}

TEST_F(CacheKeyTest, TokenizerFileNameMatters) {
  const std::string key = Key(inputs_);
  CacheKeyInputs renamed = inputs_;
  renamed.tokenizer_files = {dir_.Write("tok/tokenizer.json", "[PAD]\n[UNK]\nhello\n")};
  EXPECT_NE(Key(renamed), key);
}

TEST_F(CacheKeyTest, MissingFileIsNotFound) {
  CacheKeyInputs missing = inputs_;
  missing.data_files.push_back(dir_.File("absent.txt"));
  absl::StatusOr<std::string> key = ComputeCacheKey(missing);
  EXPECT_TRUE(absl::IsNotFound(key.status()));
  EXPECT_NE(key.status().message().find("absent.txt"), std::string_view::npos);
}

TEST(TokenizerFilesInTest, FolderFileAndVocabJsonWithMerges) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("gpt2"));
  dir.Write("gpt2/vocab.json", "{}");
  dir.Write("gpt2/merges.txt", "#version\n");
  dir.Write("gpt2/tokenizer_config.json", "{}");
  dir.Write("gpt2/pytorch_model.bin", "x");
  absl::StatusOr<std::vector<std::string>> in_folder = TokenizerFilesIn(dir.File("gpt2"));
  ASSERT_TRUE(in_folder.ok()) << in_folder.status();
  EXPECT_EQ(*in_folder, (std::vector<std::string>{dir.File("gpt2/merges.txt"),
                                                  dir.File("gpt2/tokenizer_config.json"),
                                                  dir.File("gpt2/vocab.json")}));
  absl::StatusOr<std::vector<std::string>> vocab = TokenizerFilesIn(dir.File("gpt2/vocab.json"));
  ASSERT_TRUE(vocab.ok());
  EXPECT_EQ(*vocab,
            (std::vector<std::string>{dir.File("gpt2/merges.txt"), dir.File("gpt2/vocab.json")}));
  EXPECT_TRUE(absl::IsNotFound(TokenizerFilesIn(dir.File("nope")).status()));
  std::filesystem::create_directories(dir.File("empty"));
  EXPECT_TRUE(absl::IsNotFound(TokenizerFilesIn(dir.File("empty")).status()));
}

TEST(IsValidCacheKeyTest, AcceptsOnlyLowerHex64) {
  EXPECT_TRUE(IsValidCacheKey(std::string(64, 'a')));
  EXPECT_FALSE(IsValidCacheKey(std::string(63, 'a')));
  EXPECT_FALSE(IsValidCacheKey(std::string(64, 'A')));
  EXPECT_FALSE(IsValidCacheKey("../" + std::string(61, 'a')));
  EXPECT_FALSE(IsValidCacheKey(""));
}

}  // namespace
}  // namespace lmtrain
