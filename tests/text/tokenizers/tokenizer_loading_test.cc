// LoadTokenizer: which files pick which tokenizer, and clear errors for bad
// files.
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/internal/byte_level.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tokenizer_testing::ScopedTempDir;
using tokenizer_testing::WriteTextFile;

const char kSpace[] = "\xC4\xA0";  // Ġ, the byte-level spelling of ' '.

// A tiny byte-level BPE: the 256 byte symbols (ids 0..255), then Ġt, he, Ġthe,
// <|endoftext|>.
nlohmann::ordered_json TinyVocab() {
  nlohmann::ordered_json vocab;
  for (int b = 0; b < 256; ++b) {
    vocab[tokenizers_internal::ByteLevelEncode(
        std::string(1, static_cast<char>(b)))] = b;
  }
  vocab[std::string(kSpace) + "t"] = 256;
  vocab["he"] = 257;
  vocab[std::string(kSpace) + "the"] = 258;
  vocab["<|endoftext|>"] = 259;
  return vocab;
}

std::vector<std::string> TinyMerges() {
  return {std::string(kSpace) + " t", "h e", std::string(kSpace) + "t he"};
}

void WriteTinyVocabAndMerges(const ScopedTempDir& dir) {
  WriteTextFile(dir.File("vocab.json"), TinyVocab().dump());
  std::string merges = "#version: 0.2\n";
  for (const std::string& merge : TinyMerges()) merges += merge + "\n";
  WriteTextFile(dir.File("merges.txt"), merges);
}

nlohmann::ordered_json TinyTokenizerJson() {
  return {
      {"version", "1.0"},
      {"added_tokens",
       {{{"id", 259}, {"content", "<|endoftext|>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
      {"model",
       {{"type", "BPE"}, {"vocab", TinyVocab()}, {"merges", TinyMerges()}}}};
}

absl::Status LoadError(const std::string& path) {
  auto result = LoadTokenizer(path);
  EXPECT_FALSE(result.ok()) << path << " loaded";
  return result.ok() ? absl::OkStatus() : result.status();
}

TEST(TokenizerLoadingTest, VocabAndMergesFolderOrVocabFile) {
  ScopedTempDir dir;
  WriteTinyVocabAndMerges(dir);
  for (const std::string& path : {dir.path(), dir.File("vocab.json")}) {
    auto tokenizer = LoadTokenizer(path);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    EXPECT_THAT((*tokenizer)->Encode(" the<|endoftext|>"),
                ElementsAre(258, 259));
    EXPECT_EQ((*tokenizer)->EosId(), 259);
  }
}

TEST(TokenizerLoadingTest, TokenizerJsonAloneGivesTheSameTokenizer) {
  ScopedTempDir dir;
  WriteTextFile(dir.File("tokenizer.json"), TinyTokenizerJson().dump(2));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  // " he": Ġ+h has no rule, so the space stays the byte symbol (id 32 here).
  EXPECT_THAT((*tokenizer)->Encode(" the he<|endoftext|>"),
              ElementsAre(258, 32, 257, 259));
  EXPECT_EQ((*tokenizer)->EosId(), 259);
  EXPECT_EQ((*tokenizer)->Decode({258, 32, 257, 259}), " the he<|endoftext|>");
}

TEST(TokenizerLoadingTest, MissingFilesAreNotFound) {
  ScopedTempDir dir;
  absl::Status status = LoadError(dir.File("nothing"));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr(dir.File("nothing")));

  status = LoadError(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("no tokenizer files"));

  WriteTextFile(dir.File("vocab.json"), TinyVocab().dump());
  status = LoadError(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr(dir.File("merges.txt")));
}

TEST(TokenizerLoadingTest, BadVocabNamesFileAndLine) {
  ScopedTempDir dir;
  WriteTinyVocabAndMerges(dir);
  WriteTextFile(dir.File("vocab.json"),
                "{\"a\": 0,\n  \"b\": 1,\n  \"a\": 2}\n");
  absl::Status status = LoadError(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr(dir.File("vocab.json") + ":3:"),
                    HasSubstr("appears twice")));

  WriteTextFile(dir.File("vocab.json"), "not json at all");
  status = LoadError(dir.path());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(dir.File("vocab.json") + ":1: not a JSON object"));
}

TEST(TokenizerLoadingTest, BadMergesNameFileAndLine) {
  ScopedTempDir dir;
  WriteTinyVocabAndMerges(dir);
  WriteTextFile(dir.File("merges.txt"),
                "#version: 0.2\nh e\nthis line is bad\n");
  absl::Status status = LoadError(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(dir.File("merges.txt") + ":3: expected two tokens"));

  WriteTextFile(dir.File("merges.txt"), "h e\nzz y\n");
  EXPECT_THAT(std::string(LoadError(dir.path()).message()),
              HasSubstr(dir.File("merges.txt") +
                        ":2: merge token \"zz\" is not in the vocabulary"));
}

TEST(TokenizerLoadingTest, VocabularyWithoutByteSymbolsIsRejected) {
  ScopedTempDir dir;
  WriteTextFile(dir.File("vocab.json"), R"({"a": 0, "b": 1, "ab": 2})");
  WriteTextFile(dir.File("merges.txt"), "a b\n");
  absl::Status status = LoadError(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("not a byte-level BPE vocabulary"));
}

TEST(TokenizerLoadingTest, BadTokenizerJson) {
  ScopedTempDir dir;
  nlohmann::ordered_json wordpiece = TinyTokenizerJson();
  wordpiece["model"]["type"] = "WordPiece";
  WriteTextFile(dir.File("tokenizer.json"), wordpiece.dump());
  EXPECT_EQ(LoadError(dir.path()).code(), absl::StatusCode::kUnimplemented);

  std::string duplicate = TinyTokenizerJson().dump();
  duplicate.replace(duplicate.find("\"he\":257"), 8, "\"he\":257,\"he\":258");
  WriteTextFile(dir.File("tokenizer.json"), duplicate);
  EXPECT_THAT(std::string(LoadError(dir.path()).message()),
              HasSubstr("key \"he\" appears twice"));

  WriteTextFile(dir.File("tokenizer.json"), "{\"model\": ");
  EXPECT_THAT(
      std::string(LoadError(dir.path()).message()),
      AllOf(HasSubstr("tokenizer.json: not valid JSON"), HasSubstr("line 1")));

  nlohmann::ordered_json wrong_type = TinyTokenizerJson();
  wrong_type["added_tokens"][0]["special"] = "yes";
  WriteTextFile(dir.File("tokenizer.json"), wrong_type.dump());
  EXPECT_THAT(std::string(LoadError(dir.path()).message()),
              HasSubstr("tokenizer.json: unexpected content"));

  nlohmann::ordered_json no_vocab = TinyTokenizerJson();
  no_vocab["model"].erase("vocab");
  WriteTextFile(dir.File("tokenizer.json"), no_vocab.dump());
  EXPECT_THAT(std::string(LoadError(dir.path()).message()),
              HasSubstr("model.vocab must be a non-empty object"));

  nlohmann::ordered_json bad_merge = TinyTokenizerJson();
  bad_merge["model"]["merges"][1] = "h e x";
  WriteTextFile(dir.File("tokenizer.json"), bad_merge.dump());
  EXPECT_THAT(std::string(LoadError(dir.path()).message()),
              HasSubstr("model.merges[1]"));
}

TEST(TokenizerLoadingTest, UnknownAndCorruptFiles) {
  ScopedTempDir dir;
  WriteTextFile(dir.File("notes.txt"), "hello");
  EXPECT_EQ(LoadError(dir.File("notes.txt")).code(),
            absl::StatusCode::kInvalidArgument);
  WriteTextFile(dir.File("broken.model"),
                "this is not a protobuf \xFF\xFF\xFF");
  absl::Status status = LoadError(dir.File("broken.model"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("broken.model: not a sentencepiece model"));
}

}  // namespace
}  // namespace lmtrain
