// WordPieceTokenizer: BERT's tokenizer (BertNormalizer, BertPreTokenizer,
// WordPiece, [CLS]/[SEP] template, WordPiece decoder), Hugging Face
// compatible: for bert-base-uncased, EncodeWithOffsets and EncodePair give the
// ids, tokens, byte offsets, type ids, masks, word and sequence ids of
// transformers' BertTokenizerFast.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/tokenizers/internal/hf_wordpiece_files.h"
#include "text/tokenizers/internal/special_tokens.h"
#include "text/tokenizers/internal/wordpiece_model.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

// Text -> added-token split (on the raw text) -> normalization with alignment
// tracking (see internal/normalized_text.h) -> whitespace/punctuation words ->
// greedy longest-match WordPiece -> ids. Offsets are bytes of the original
// text, mapped back through normalization as HF does (a token's range runs
// from its first character's original start to its last one's end). Ill-formed
// UTF-8 reads as U+FFFD, which cleaning removes. Encode gives the ids without
// the template; Decode joins tokens, glues "##" continuations and applies
// transformers' clean_up_tokenization (special tokens are kept as text).
//
// Immutable after construction; every method may be called from several
// threads at once. Not copyable.
class WordPieceTokenizer final : public Tokenizer {
 public:
  // A BERT vocab.txt (see ReadVocabTxt for the settings read beside it).
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> FromVocabTxt(const std::string& path);
  // An HF tokenizer.json with a WordPiece model.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> FromTokenizerJson(
      const std::string& path);
  // InvalidArgument (naming files.source) when the unknown token, or a
  // template token, is not in the vocabulary.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> Create(
      tokenizers_internal::WordPieceFiles files);

  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;

  std::vector<int32_t> Encode(std::string_view text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  int32_t VocabSize() const override { return static_cast<int32_t>(files_.id_to_token.size()); }
  std::string IdToToken(int32_t id) const override;
  std::optional<int32_t> TokenToId(std::string_view token) const override;
  // None, as in HF's BertTokenizer ([CLS] and [SEP] are separate roles).
  std::optional<int32_t> EosId() const override { return std::nullopt; }
  std::optional<int32_t> BosId() const override { return std::nullopt; }
  std::optional<int32_t> PadId() const override { return pad_id_; }
  std::optional<int32_t> UnkId() const override { return unk_id_; }
  std::optional<int32_t> MaskId() const override { return mask_id_; }
  std::optional<int32_t> ClsId() const override { return cls_id_; }
  std::optional<int32_t> SepId() const override { return sep_id_; }
  // Writes vocab.txt, tokenizer_config.json (BertTokenizer, do_lower_case)
  // and special_tokens_map.json.
  absl::Status SaveTo(const std::string& dir) const override;

 protected:
  Encoding EncodeSequence(std::string_view text) const override;
  void PostProcess(Encoding* sequence, int index, bool pair,
                   bool add_special_tokens) const override;
  size_t NumTemplateTokens(bool pair) const override;

 private:
  WordPieceTokenizer(tokenizers_internal::WordPieceFiles files,
                     tokenizers_internal::TokenIdMap token_to_id, int32_t unk_id);
  std::optional<int32_t> RoleId(const std::string& token) const;
  // Appends the tokens of text[begin, end) (no added tokens inside), words
  // numbered from *word_id on.
  void EncodePiece(std::string_view text, size_t begin, size_t end, int* word_id,
                   Encoding* encoding) const;
  void AddTemplateTokens(const std::vector<tokenizers_internal::TemplateToken>& tokens,
                         Encoding* encoding) const;

  const tokenizers_internal::WordPieceFiles files_;
  const tokenizers_internal::TokenIdMap token_to_id_;
  const tokenizers_internal::WordPieceModel model_;
  const tokenizers_internal::SpecialTokenMatcher special_matcher_;
  const int32_t unk_id_;
  std::optional<int32_t> cls_id_;
  std::optional<int32_t> sep_id_;
  std::optional<int32_t> pad_id_;
  std::optional<int32_t> mask_id_;
};

}  // namespace lmtrain
