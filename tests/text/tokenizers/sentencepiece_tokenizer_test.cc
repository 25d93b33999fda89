#include "text/tokenizers/sentencepiece_tokenizer.h"

#include <algorithm>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;
using tokenizer_testing::ReadTextFile;
using tokenizer_testing::ScopedTempDir;

const char kCorpus[] = "examples/data/austen_train.txt";
const char kText[] =
    "Emma Woodhouse, handsome, clever, and rich, had lived nearly twenty-one "
    "years.";

SentencePieceTrainOptions SmallOptions() {
  SentencePieceTrainOptions options;
  options.vocab_size = 400;
  options.max_sentences = 1500;  // Fewer than the corpus's lines: sampling is exercised.
  return options;
}

std::unique_ptr<SentencePieceTokenizer> TrainOrDie(const std::string& model_path,
                                                   const SentencePieceTrainOptions& options) {
  auto trained =
      SentencePieceTokenizer::Train(tokenizer_testing::SourcePath(kCorpus), model_path, options);
  EXPECT_TRUE(trained.ok()) << trained.status();
  return trained.ok() ? std::move(trained).value() : nullptr;
}

TEST(SentencePieceTokenizerTest, TrainedBpeRoundTripsTextAndHasTheSpecialPieces) {
  ScopedTempDir dir;
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = tokenizer->Encode(kText);
  EXPECT_GT(ids.size(), 5u);
  EXPECT_EQ(tokenizer->Decode(ids), kText);
  EXPECT_EQ(tokenizer->PadId(), 0);
  EXPECT_EQ(tokenizer->BosId(), 2);
  EXPECT_EQ(tokenizer->EosId(), 3);
  EXPECT_EQ(tokenizer->IdToToken(0), "<pad>");
  EXPECT_EQ(tokenizer->IdToToken(1), "<unk>");
  EXPECT_EQ(tokenizer->IdToToken(3), "</s>");
  EXPECT_EQ(tokenizer->TokenToId("<unk>"), 1);
  EXPECT_EQ(tokenizer->TokenToId("not-a-piece-at-all"), std::nullopt);
  EXPECT_EQ(tokenizer->IdToToken(tokenizer->VocabSize()), "");
  EXPECT_LE(tokenizer->VocabSize(), 400);
  EXPECT_GT(tokenizer->VocabSize(), 100);
}

TEST(SentencePieceTokenizerTest, TrainedModelHasAMaskPieceThatEncodesWhole) {
  ScopedTempDir dir;
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->MaskId(), 4);
  EXPECT_EQ(tokenizer->IdToToken(4), "<mask>");
  EXPECT_EQ(tokenizer->UnkId(), 1);
  const std::vector<int32_t> ids = tokenizer->Encode("Emma<mask>rich");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 4), 1);
}

// The bytes of `text` the offsets cover, in token order; "" (and a test
// failure) when a range is reversed, past the text or overlaps the previous one.
std::string Spelled(const std::string& text, const Encoding& encoding) {
  std::string spelled;
  size_t previous_end = 0;
  for (const auto& [begin, end] : encoding.offsets) {
    if (begin > end || end > text.size() || begin < previous_end) {
      ADD_FAILURE() << "bad range [" << begin << ", " << end << ") after " << previous_end;
      return "";
    }
    previous_end = end;
    spelled += text.substr(begin, end - begin);
  }
  return spelled;
}

TEST(SentencePieceTokenizerTest, EncodeWithOffsetsAlignsPiecesWithTheText) {
  ScopedTempDir dir;
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  const std::string text = "Emma was rich";
  const Encoding encoding = tokenizer->EncodeWithOffsets(text, true);
  EXPECT_EQ(encoding.ids, tokenizer->Encode(text));
  EXPECT_EQ(Spelled(text, encoding), "Emmawasrich");
  EXPECT_EQ(encoding.word_ids.back(), 2);
}

// nmt_nfkc rewrites full-width letters and folds runs of spaces, so the pieces
// no longer spell the input; the offsets must still point at the input bytes
// each piece came from (sentencepiece's own alignment).
TEST(SentencePieceTokenizerTest, OffsetsStayExactWhenNormalizationChangesTheText) {
  ScopedTempDir dir;
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  // "Ｅｍｍａ" is four full-width letters of 3 bytes each (NFKC: "Emma").
  const std::string text = "\xef\xbc\xa5\xef\xbd\x8d\xef\xbd\x8d\xef\xbd\x81   was  rich";
  const Encoding encoding = tokenizer->EncodeWithOffsets(text, true);
  EXPECT_EQ(encoding.ids, tokenizer->Encode(text));
  ASSERT_FALSE(encoding.offsets.empty());
  // Every input byte but the spaces belongs to exactly one piece.
  EXPECT_EQ(Spelled(text, encoding), "\xef\xbc\xa5\xef\xbd\x8d\xef\xbd\x8d\xef\xbd\x81wasrich");
  EXPECT_EQ(encoding.offsets.front().first, 0u);
  EXPECT_EQ(encoding.offsets.back().second, text.size());
  EXPECT_EQ(encoding.word_ids.front(), 0);
  EXPECT_EQ(encoding.word_ids.back(), 2);
}

TEST(SentencePieceTokenizerTest, DecodeWritesSpecialPiecesAsText) {
  ScopedTempDir dir;
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> ids = {2};
  for (int32_t id : tokenizer->Encode("the end")) ids.push_back(id);
  ids.push_back(3);
  ids.push_back(-7);  // Out of range: skipped.
  EXPECT_EQ(tokenizer->Decode(ids), "<s>the end</s>");
}

TEST(SentencePieceTokenizerTest, TrainingIsDeterministicForASeed) {
  ScopedTempDir dir;
  ASSERT_NE(TrainOrDie(dir.File("a.model"), SmallOptions()), nullptr);
  ASSERT_NE(TrainOrDie(dir.File("b.model"), SmallOptions()), nullptr);
  const std::string a = ReadTextFile(dir.File("a.model"));
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, ReadTextFile(dir.File("b.model")));
  SentencePieceTrainOptions other_seed = SmallOptions();
  other_seed.seed = 7;
  ASSERT_NE(TrainOrDie(dir.File("c.model"), other_seed), nullptr);
  EXPECT_NE(a, ReadTextFile(dir.File("c.model"))) << "the seed should pick other sentences";
}

TEST(SentencePieceTokenizerTest, UnigramTrains) {
  ScopedTempDir dir;
  SentencePieceTrainOptions options = SmallOptions();
  options.model_type = "unigram";
  auto tokenizer = TrainOrDie(dir.File("spiece.model"), options);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode(kText)), kText);
}

TEST(SentencePieceTokenizerTest, SaveToThenLoadGivesIdenticalIds) {
  ScopedTempDir train_dir, save_dir;
  auto tokenizer = TrainOrDie(train_dir.File("spiece.model"), SmallOptions());
  ASSERT_NE(tokenizer, nullptr);
  ASSERT_TRUE(tokenizer->SaveTo(save_dir.path()).ok());
  EXPECT_EQ(ReadTextFile(save_dir.File("spiece.model")),
            ReadTextFile(train_dir.File("spiece.model")));
  EXPECT_THAT(ReadTextFile(save_dir.File("tokenizer_config.json")),
              HasSubstr("\"tokenizer_class\": \"T5Tokenizer\""));
  EXPECT_THAT(ReadTextFile(save_dir.File("special_tokens_map.json")),
              HasSubstr("\"pad_token\": \"<pad>\""));
  for (const std::string& path : {save_dir.path(), save_dir.File("spiece.model")}) {
    auto reloaded = LoadTokenizer(path);
    ASSERT_TRUE(reloaded.ok()) << reloaded.status();
    EXPECT_EQ((*reloaded)->Encode(kText), tokenizer->Encode(kText));
    EXPECT_EQ((*reloaded)->VocabSize(), tokenizer->VocabSize());
  }
}

TEST(SentencePieceTokenizerTest, TrainingErrors) {
  ScopedTempDir dir;
  const std::string corpus = tokenizer_testing::SourcePath(kCorpus);
  SentencePieceTrainOptions bad = SmallOptions();
  bad.model_type = "wordpiece";
  EXPECT_EQ(TrainSentencePiece(corpus, dir.File("m.model"), bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = SmallOptions();
  bad.vocab_size = 2;
  EXPECT_EQ(TrainSentencePiece(corpus, dir.File("m.model"), bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto missing = TrainSentencePiece(dir.File("none.txt"), dir.File("m.model"), SmallOptions());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(dir.File("none.txt")));
  tokenizer_testing::WriteTextFile(dir.File("empty.txt"), "");
  auto empty = TrainSentencePiece(dir.File("empty.txt"), dir.File("m.model"), SmallOptions());
  EXPECT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr(dir.File("empty.txt")));
}

}  // namespace
}  // namespace lmtrain
