// Gpt2BpeTokenizer: GPT-2's byte-level BPE (also RoBERTa-style vocabularies),
// Hugging Face compatible: for the GPT-2 files, Encode gives the ids of
// transformers' GPT2TokenizerFast.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "text/tokenizers/internal/bpe_merges.h"
#include "text/tokenizers/internal/bpe_model.h"
#include "text/tokenizers/internal/hf_config_files.h"
#include "text/tokenizers/internal/special_tokens.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

// Text -> special-token split -> GPT-2 regex pre-tokenization -> bytes -> BPE
// merges -> ids. Special tokens (the bos/eos/unk/pad/additional tokens present
// in the vocabulary, e.g.
// "<|endoftext|>") found in the text encode to their id, as in Hugging Face.
// Decode maps ids back through the byte map and returns valid UTF-8 (ill-formed
// byte sequences, which only partial token sequences produce, become U+FFFD);
// ids outside the vocabulary are skipped.
//
// EncodeWithOffsets follows the gpt2 hub tokenizer.json: each pre-tokenized
// word (and each special token) is a word id; a token's offsets cover the
// characters its bytes belong to (a token holding part of a multi-byte
// character spans the whole character), then HF's ByteLevel post-processor
// (trim_offsets, add_prefix_space) moves them past leading and trailing
// spaces. No template tokens are added.
//
// Immutable after construction apart from an internal word cache; every method
// may be called from several threads at once. Not copyable.
class Gpt2BpeTokenizer final : public Tokenizer {
 public:
  // Loads `vocab_json` and `merges_txt`. Special tokens come from
  // special_tokens_map.json beside vocab.json when present, else
  // "<|endoftext|>" (when in the vocabulary) is bos, eos and unk. NotFound for
  // a missing file; InvalidArgument naming the file (and line) for malformed
  // content, including a vocabulary lacking one of the 256 byte symbols.
  static absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> FromFiles(
      const std::string& vocab_json, const std::string& merges_txt);

  // Loads the byte-level BPE of an HF tokenizer.json (see hf_tokenizer_json.h
  // for the subset accepted; Unimplemented for other tokenizer kinds). Added
  // tokens marked special are special tokens; "<|endoftext|>" takes the
  // bos/eos/unk roles when present.
  static absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> FromTokenizerJson(
      const std::string& path);

  Gpt2BpeTokenizer(const Gpt2BpeTokenizer&) = delete;
  Gpt2BpeTokenizer& operator=(const Gpt2BpeTokenizer&) = delete;

  std::vector<int32_t> Encode(std::string_view text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  int32_t VocabSize() const override {
    return static_cast<int32_t>(id_to_token_.size());
  }
  std::string IdToToken(int32_t id) const override;
  std::optional<int32_t> TokenToId(std::string_view token) const override;
  std::optional<int32_t> EosId() const override { return eos_id_; }
  std::optional<int32_t> BosId() const override { return bos_id_; }
  std::optional<int32_t> PadId() const override { return pad_id_; }
  std::optional<int32_t> UnkId() const override { return unk_id_; }
  // Writes vocab.json, merges.txt, tokenizer_config.json (GPT2Tokenizer) and
  // special_tokens_map.json.
  absl::Status SaveTo(const std::string& dir) const override;

 protected:
  Encoding EncodeSequence(std::string_view text) const override;
  void PostProcess(Encoding* sequence, int index, bool pair,
                   bool add_special_tokens) const override;

 private:
  struct Parts {
    std::vector<std::string>
        id_to_token;  // "" for ids missing from the vocabulary.
    tokenizers_internal::TokenIdMap token_to_id;  // The first id of each token.
    std::vector<tokenizers_internal::BpeMerge> merges;
    tokenizers_internal::SpecialTokenNames specials;
    std::string source;  // File named in errors.
  };
  static absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> Create(Parts parts);
  Gpt2BpeTokenizer(Parts parts, const std::array<int32_t, 256>& byte_ids);

  std::optional<int32_t> IdOfSpecial(const std::string& token) const;
  void EncodeOrdinaryText(std::string_view text,
                          std::vector<int32_t>* ids) const;
  // Appends the tokens of `word` (a view into `text`) with word id `word_id`.
  void EncodeWordWithOffsets(std::string_view text, std::string_view word,
                             int word_id, Encoding* encoding) const;
  std::string VocabJson() const;
  std::string MergesTxt() const;

  const std::vector<std::string> id_to_token_;
  const std::vector<tokenizers_internal::BpeMerge> merges_;
  const tokenizers_internal::SpecialTokenNames specials_;
  const tokenizers_internal::TokenIdMap token_to_id_;
  std::vector<std::string> id_to_bytes_;  // What each id decodes to.
  // Special tokens matched in the input text.
  tokenizers_internal::SpecialTokenMatcher special_matcher_;
  std::optional<int32_t> bos_id_;
  std::optional<int32_t> eos_id_;
  std::optional<int32_t> pad_id_;
  std::optional<int32_t> unk_id_;
  const tokenizers_internal::BpeModel bpe_;
};

}  // namespace lmtrain
