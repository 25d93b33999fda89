#include "text/tokenizers/gpt2_bpe_tokenizer.h"

#include <memory>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tokenizer_testing::Gpt2TestDir;
using tokenizer_testing::ScopedTempDir;

constexpr int32_t kEndOfText = 50256;

class Gpt2BpeTokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = Gpt2BpeTokenizer::FromFiles(Gpt2TestDir() + "/vocab.json",
                                              Gpt2TestDir() + "/merges.txt");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    tokenizer_ = std::move(loaded).value();
  }
  std::unique_ptr<Gpt2BpeTokenizer> tokenizer_;
};

TEST_F(Gpt2BpeTokenizerTest, KnownIdsAndSpecialTokens) {
  EXPECT_THAT(tokenizer_->Encode("Hello world"), ElementsAre(15496, 995));
  EXPECT_EQ(tokenizer_->VocabSize(), 50257);
  EXPECT_EQ(tokenizer_->EosId(), kEndOfText);
  EXPECT_EQ(tokenizer_->BosId(), kEndOfText);
  EXPECT_EQ(tokenizer_->PadId(), std::nullopt);
  EXPECT_EQ(tokenizer_->IdToToken(995), "\xC4\xA0world");  // Ġworld
  EXPECT_EQ(tokenizer_->TokenToId("\xC4\xA0world"), 995);
  EXPECT_EQ(tokenizer_->TokenToId("no such token"), std::nullopt);
  EXPECT_EQ(tokenizer_->IdToToken(-1), "");
  EXPECT_EQ(tokenizer_->IdToToken(50257), "");
}

TEST_F(Gpt2BpeTokenizerTest, EndOfTextInTheTextIsTheSpecialToken) {
  EXPECT_THAT(tokenizer_->Encode("Hello<|endoftext|> world"),
              ElementsAre(15496, kEndOfText, 995));
  EXPECT_THAT(tokenizer_->Encode("<|endoftext|>"), ElementsAre(kEndOfText));
  EXPECT_EQ(tokenizer_->Decode({15496, kEndOfText, 995}),
            "Hello<|endoftext|> world");
}

TEST_F(Gpt2BpeTokenizerTest, OffsetsSkipSpacesAndSpecialTokensAreWords) {
  const Encoding e =
      tokenizer_->EncodeWithOffsets("Hello<|endoftext|> world", true);
  EXPECT_THAT(e.ids, ElementsAre(15496, kEndOfText, 995));
  using Offsets = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(e.offsets, (Offsets{{0, 5}, {5, 18}, {19, 24}}));
  EXPECT_THAT(e.word_ids, ElementsAre(0, 1, 2));
  EXPECT_THAT(e.special_tokens_mask, ElementsAre(0, 0, 0));
  EXPECT_EQ(tokenizer_->UnkId(), kEndOfText);
}

TEST_F(Gpt2BpeTokenizerTest, PairsAddNoTemplateTokens) {
  auto pair = tokenizer_->EncodePair("Hello", " world", {}, false);
  ASSERT_TRUE(pair.ok()) << pair.status();
  const Encoding& e = (*pair)[0];
  EXPECT_THAT(e.ids, ElementsAre(15496, 995));
  EXPECT_THAT(e.type_ids, ElementsAre(0, 1));
  EXPECT_THAT(e.sequence_ids, ElementsAre(0, 1));
  // The second sequence's first token keeps its single leading space, as
  // HF's ByteLevel post-processor (add_prefix_space) does.
  EXPECT_EQ(e.offsets[1], (std::pair<size_t, size_t>{0, 6}));
}

TEST_F(Gpt2BpeTokenizerTest, DecodeInvertsEncode) {
  const std::string texts[] = {
      "",
      "plain ASCII, with punctuation! And numbers: 3.14159, -42.",
      "na\xC3\xAFve caf\xC3\xA9 \xC3\x9C"
      "ber \xC3\x80\xC3\x89\xC3\x8E",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
      "emoji \xF0\x9F\xA4\x97\xF0\x9F\x9A\x80 and flags "
      "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
      "control\x01\x02\x1b[0m chars\x7f\r\n",
      std::string(300, ' ') + "x" + std::string(100, '\t') + "\n\n\n",
      "e\xCC\x81 (combining) and \xEF\xAC\x81 ligature",
  };
  for (const std::string& text : texts) {
    EXPECT_EQ(tokenizer_->Decode(tokenizer_->Encode(text)), text) << text;
  }
  EXPECT_TRUE(tokenizer_->Encode("").empty());
}

TEST_F(Gpt2BpeTokenizerTest, DecodeAlwaysGivesValidUtf8) {
  const std::vector<int32_t> ids =
      tokenizer_->Encode("\xF0\x9F\xA4\x97");  // 🤗, several tokens.
  ASSERT_GT(ids.size(), 1u);
  EXPECT_EQ(tokenizer_->Decode({ids[0]}), "\xEF\xBF\xBD");
  EXPECT_EQ(tokenizer_->Decode({15496, -5, 99999, 995}),
            "Hello world");  // Bad ids skipped.
}

TEST_F(Gpt2BpeTokenizerTest, ConcurrentEncodesAgree) {
  const std::string text =
      "It is a truth universally acknowledged, that a single man";
  const std::vector<int32_t> expected = tokenizer_->Encode(text);
  std::vector<std::vector<int32_t>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        results[t] = tokenizer_->Encode(text + std::to_string(i % 7));
      results[t] = tokenizer_->Encode(text);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST_F(Gpt2BpeTokenizerTest, SaveToReloadsTheSameTokenizer) {
  ScopedTempDir dir;
  ASSERT_TRUE(tokenizer_->SaveTo(dir.path()).ok());
  auto reloaded = LoadTokenizer(dir.path());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  const std::string text =
      "Saved and loaded: d\xC3\xA9j\xC3\xA0 vu <|endoftext|> 2024!";
  EXPECT_EQ((*reloaded)->Encode(text), tokenizer_->Encode(text));
  EXPECT_EQ((*reloaded)->EosId(), kEndOfText);
  EXPECT_EQ((*reloaded)->VocabSize(), tokenizer_->VocabSize());
  const std::string config =
      tokenizer_testing::ReadTextFile(dir.File("tokenizer_config.json"));
  EXPECT_THAT(config, HasSubstr("\"tokenizer_class\": \"GPT2Tokenizer\""));
  EXPECT_THAT(
      tokenizer_testing::ReadTextFile(dir.File("special_tokens_map.json")),
      HasSubstr("\"eos_token\": \"<|endoftext|>\""));
  EXPECT_EQ(tokenizer_testing::ReadTextFile(dir.File("merges.txt")),
            tokenizer_testing::ReadTextFile(Gpt2TestDir() + "/merges.txt"));
  EXPECT_EQ(tokenizer_->SaveTo(dir.File("missing")).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(Gpt2BpeTokenizerTest, SpecialTokensMapSetsRoles) {
  ScopedTempDir dir;
  tokenizer_testing::CopyGpt2Files(dir.path());
  tokenizer_testing::WriteTextFile(
      dir.File("special_tokens_map.json"),
      R"({"eos_token": {"content": "<|endoftext|>"}, "pad_token": "!", "mask_token": "<m>"})");
  auto loaded = LoadTokenizer(dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->EosId(), kEndOfText);
  EXPECT_EQ((*loaded)->BosId(), std::nullopt);
  EXPECT_EQ((*loaded)->PadId(), 0);  // "!" is id 0 in GPT-2.
}

}  // namespace
}  // namespace lmtrain
