// WordPieceTokenizer on a tiny hand-written vocabulary: segmentation, BERT's
// normalization and offsets, the template, decoding, saving, loading.
#include "text/tokenizers/wordpiece_tokenizer.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tokenizer_testing::ScopedTempDir;
using tokenizer_testing::WriteTextFile;
using Offsets = std::vector<std::pair<size_t, size_t>>;

// Ids are line numbers - 1: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 ...
const char kVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n##able\nwant\n##ed\n"
    "cafe\n,\n.\n'\nt\ndon\n日\n本\na\n##b\nhello\n";

std::unique_ptr<WordPieceTokenizer> TinyTokenizer(const ScopedTempDir& dir) {
  WriteTextFile(dir.File("vocab.txt"), kVocab);
  auto tokenizer = WordPieceTokenizer::FromVocabTxt(dir.File("vocab.txt"));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? std::move(tokenizer).value() : nullptr;
}

TEST(WordPieceTokenizerTest, GreedyLongestMatchWithContinuations) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  const Encoding e = tok->EncodeWithOffsets("unaffable wanted", true);
  EXPECT_THAT(e.tokens, ElementsAre("[CLS]", "un", "##aff", "##able", "want", "##ed", "[SEP]"));
  EXPECT_THAT(e.ids, ElementsAre(2, 5, 6, 7, 8, 9, 3));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 2}, {2, 5}, {5, 9}, {10, 14}, {14, 16}, {0, 0}}));
  EXPECT_THAT(e.special_tokens_mask, ElementsAre(1, 0, 0, 0, 0, 0, 1));
  EXPECT_EQ(e.word_ids[1], 0);
  EXPECT_EQ(e.word_ids[5], 1);
  EXPECT_EQ(e.word_ids[0], std::nullopt);
  EXPECT_EQ(tok->Encode("unaffable wanted"), (std::vector<int32_t>{5, 6, 7, 8, 9}));
}

TEST(WordPieceTokenizerTest, UnknownWordsBecomeOneUnkToken) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  // "unx": "un" matches but "##x" does not, so the whole word is [UNK].
  const Encoding e = tok->EncodeWithOffsets("a unx", false);
  EXPECT_THAT(e.tokens, ElementsAre("a", "[UNK]"));
  EXPECT_EQ(e.offsets, (Offsets{{0, 1}, {2, 5}}));
  // More than 100 characters: [UNK] even though "a" + "##b"... would match.
  const std::string long_word = "a" + std::string(100, 'b');
  EXPECT_THAT(tok->Encode(long_word), ElementsAre(1));
  EXPECT_THAT(tok->Encode("a" + std::string(99, 'b')).size(), 100u);
}

TEST(WordPieceTokenizerTest, OffsetsMapNormalizedTextBackToOriginalBytes) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  // "CAFÉ" (É is 2 bytes) lowercases and loses its accent: "cafe" spans
  // the original 5 bytes. In a decomposed "e\u0301" the dropped mark is not
  // part of the token, as in HF.
  Encoding e = tok->EncodeWithOffsets("CAFÉ, Cafe\xCC\x81.", false);
  EXPECT_THAT(e.tokens, ElementsAre("cafe", ",", "cafe", "."));
  EXPECT_EQ(e.offsets, (Offsets{{0, 5}, {5, 6}, {7, 11}, {13, 14}}));
  // Punctuation splits words; CJK characters are words of their own.
  e = tok->EncodeWithOffsets("don't日本", false);
  EXPECT_THAT(e.tokens, ElementsAre("don", "'", "t", "日", "本"));
  EXPECT_EQ(e.offsets, (Offsets{{0, 3}, {3, 4}, {4, 5}, {5, 8}, {8, 11}}));
  EXPECT_THAT(e.word_ids, ElementsAre(0, 1, 2, 3, 4));
}

TEST(WordPieceTokenizerTest, CleaningDropsControlsAndInvalidBytes) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  // NUL, a soft hyphen (Cf), ill-formed bytes and U+FFFD vanish inside a
  // word; tabs and NBSP separate words.
  const std::string text = std::string(
      "hel\0lo\xC2\xADhello\xFF\xEF\xBF\xBD\tcafe\xC2\xA0"
      "a",
      25);
  const Encoding e = tok->EncodeWithOffsets(text, false);
  EXPECT_THAT(e.tokens, ElementsAre("[UNK]", "cafe", "a"));
  // The [UNK] word "hellohello" ends with its last kept character.
  EXPECT_EQ(e.offsets, (Offsets{{0, 13}, {18, 22}, {24, 25}}));
}

TEST(WordPieceTokenizerTest, SpecialTokensInTextAreMatchedBeforeNormalizing) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  const Encoding e = tok->EncodeWithOffsets("a[MASK]hello [mask]", false);
  // "[mask]" is not the token (case differs): "[", "mask", "]" are words,
  // all unknown to this vocabulary.
  EXPECT_THAT(e.tokens, ElementsAre("a", "[MASK]", "hello", "[UNK]", "[UNK]", "[UNK]"));
  EXPECT_THAT(e.word_ids, ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(e.offsets[1], (std::pair<size_t, size_t>{1, 7}));
  EXPECT_THAT(e.special_tokens_mask, ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_EQ(tok->MaskId(), 4);
  EXPECT_EQ(tok->ClsId(), 2);
  EXPECT_EQ(tok->SepId(), 3);
  EXPECT_EQ(tok->PadId(), 0);
  EXPECT_EQ(tok->UnkId(), 1);
  EXPECT_EQ(tok->BosId(), std::nullopt);
}

TEST(WordPieceTokenizerTest, DecodeJoinsContinuationsAndCleansUpSpaces) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->Decode(tok->Encode("unaffable, don't hello.")), "unaffable, don't hello.");
  EXPECT_EQ(tok->Decode({2, 20, 3}), "[CLS] hello [SEP]");
  EXPECT_EQ(tok->Decode({6, 20, 999, -1}), "##aff hello");
}

TEST(WordPieceTokenizerTest, SavedFilesReloadToTheSameTokenizer) {
  ScopedTempDir dir;
  auto tok = TinyTokenizer(dir);
  ASSERT_NE(tok, nullptr);
  ScopedTempDir saved;
  ASSERT_TRUE(tok->SaveTo(saved.path()).ok());
  auto loaded = LoadTokenizer(saved.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string text = "CAFÉ unaffable [MASK] 日本";
  EXPECT_EQ((*loaded)->EncodeWithOffsets(text, true).ids, tok->EncodeWithOffsets(text, true).ids);
  EXPECT_EQ((*loaded)->VocabSize(), tok->VocabSize());
  auto from_file = LoadTokenizer(saved.File("vocab.txt"));
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ((*from_file)->Encode(text), tok->Encode(text));
}

TEST(WordPieceTokenizerTest, CasedConfigKeepsCaseAndAccents) {
  ScopedTempDir dir;
  WriteTextFile(dir.File("vocab.txt"), std::string(kVocab) + "Café\n");
  WriteTextFile(dir.File("tokenizer_config.json"), R"({"do_lower_case": false})");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->IdToToken((*tok)->Encode("Café")[0]), "Café");
}

TEST(WordPieceTokenizerTest, LoadsAWordPieceTokenizerJson) {
  ScopedTempDir dir;
  const char json[] = R"({
    "added_tokens": [{"id": 0, "content": "[UNK]", "special": true},
                     {"id": 1, "content": "[CLS]", "special": true},
                     {"id": 2, "content": "[SEP]", "special": true}],
    "normalizer": {"type": "BertNormalizer", "lowercase": true,
                   "strip_accents": null, "clean_text": true,
                   "handle_chinese_chars": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
      "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
               {"Sequence": {"id": "B", "type_id": 1}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 1}}]},
    "model": {"type": "WordPiece", "unk_token": "[UNK]",
              "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100,
              "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hi": 3,
                        "##s": 4}}})";
  WriteTextFile(dir.File("tokenizer.json"), json);
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_THAT((*tok)->EncodeWithOffsets("His", true).ids, ElementsAre(1, 3, 4, 2));
  auto pair = (*tok)->EncodePair("hi", "his", {}, false);
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_THAT((*pair)[0].ids, ElementsAre(1, 3, 2, 3, 4, 2));
  EXPECT_THAT((*pair)[0].type_ids, ElementsAre(0, 0, 0, 1, 1, 1));
}

TEST(WordPieceTokenizerTest, RejectsVocabulariesWithoutTheUnknownToken) {
  ScopedTempDir dir;
  WriteTextFile(dir.File("vocab.txt"), "[CLS]\n[SEP]\nhello\n");
  auto tok = WordPieceTokenizer::FromVocabTxt(dir.File("vocab.txt"));
  ASSERT_FALSE(tok.ok());
  EXPECT_THAT(tok.status().message(), HasSubstr("[UNK]"));
  EXPECT_THAT(tok.status().message(), HasSubstr("vocab.txt"));
}

}  // namespace
}  // namespace lmtrain
