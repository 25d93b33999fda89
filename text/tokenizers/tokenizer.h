// Tokenizer: text <-> token ids. Torch-free; used by lm-train.
//
// Implementations (one concept per file): Gpt2BpeTokenizer (byte-level BPE from vocab.json +
// merges.txt, GPT-2 pre-tokenization), WordPieceTokenizer (BERT, from vocab.txt or tokenizer.json)
// and SentencePieceTokenizer (a .model file through the sentencepiece shim, see text/spm/).
// Instances are immutable after construction and safe to use from several threads at once.
//
// Two levels: Encode/Decode (ids only, no special tokens: what lm-train's causal LM data
// needs), and EncodeWithOffsets/EncodePair, which give Hugging Face tokenizers' full Encoding
// (tokens, byte offsets, type ids, masks, word and sequence ids) with the model's template
// ([CLS] a [SEP] b [SEP] for BERT), truncation with overflow windows, and padding.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "text/tokenizers/encoding.h"

namespace lmtrain {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Ids of `text`, no special tokens added.
  virtual std::vector<int32_t> Encode(std::string_view text) const = 0;
  // Text of `ids`; special tokens are kept as their text.
  virtual std::string Decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t VocabSize() const = 0;
  // Token string of an id ("" when out of range), and id of a token string.
  virtual std::string IdToToken(int32_t id) const = 0;
  virtual std::optional<int32_t> TokenToId(std::string_view token) const = 0;
  // End-of-text / begin-of-text / padding ids, when the vocabulary has them.
  virtual std::optional<int32_t> EosId() const = 0;
  virtual std::optional<int32_t> BosId() const = 0;
  virtual std::optional<int32_t> PadId() const = 0;
  // Unknown / mask / classifier ([CLS]) / separator ([SEP]) ids, when the
  // tokenizer has them (nullopt by default).
  virtual std::optional<int32_t> UnkId() const { return std::nullopt; }
  virtual std::optional<int32_t> MaskId() const { return std::nullopt; }
  virtual std::optional<int32_t> ClsId() const { return std::nullopt; }
  virtual std::optional<int32_t> SepId() const { return std::nullopt; }

  // `text` as Hugging Face's tokenizer(text, return_offsets_mapping=True)
  // gives it, offsets in UTF-8 bytes of `text`. With `add_special_tokens` the
  // model's template is applied. Any bytes are accepted (ill-formed UTF-8
  // included). Its ids equal Encode(text) plus the template's.
  virtual Encoding EncodeWithOffsets(std::string_view text,
                                     bool add_special_tokens) const;

  // The pair (`first`, `second`) with the template, truncated to
  // `truncation.max_length` tokens (0: not truncated), as HF tokenizers does:
  // element 0 is the kept encoding; with `return_overflowing`, every overflow
  // window follows (each a full template around its window, consecutive
  // windows sharing `truncation.stride` tokens). Offsets index each sequence's
  // own text. InvalidArgument when the truncation cannot be met (see
  // TruncationOptions), naming the lengths.
  absl::StatusOr<std::vector<Encoding>> EncodePair(
      std::string_view first, std::string_view second,
      const TruncationOptions& truncation, bool return_overflowing,
      bool add_special_tokens = true) const;
  // The same for a single sequence (only_second is then an error).
  absl::StatusOr<std::vector<Encoding>> EncodeTruncated(
      std::string_view text, const TruncationOptions& truncation,
      bool return_overflowing, bool add_special_tokens = true) const;

  // Pads `batch` (see PadEncodings) with PadId() and its token.
  // FailedPrecondition when the tokenizer has no padding token.
  absl::Status Pad(std::vector<Encoding>* batch,
                   const PaddingOptions& options) const;
  // Writes the files that reload this tokenizer (here with LoadTokenizer, and in HF
  // transformers with AutoTokenizer): vocab.json + merges.txt, or spiece.model; plus
  // tokenizer_config.json and special_tokens_map.json. `dir` must exist.
  virtual absl::Status SaveTo(const std::string& dir) const = 0;

 protected:
  // One sequence, no template: type id 0, sequence id 0, special mask 0.
  // The default aligns Encode(text)'s pieces (as Decode gives them) with the
  // text, left to right: exact when the pieces spell the text, else a piece
  // that cannot be found gets an empty range at the current position; word
  // ids count whitespace-separated words.
  virtual Encoding EncodeSequence(std::string_view text) const;
  // The model's post-processor on `sequence` (index 0 or 1 of a single input
  // or of a pair; called on every overflow window): with
  // `add_special_tokens`, adds the template's tokens around it; may also
  // adjust offsets (GPT-2 trims spaces). Type and sequence ids are already
  // set. Default: nothing.
  virtual void PostProcess(Encoding* /*sequence*/, int /*index*/,
                           bool /*pair*/, bool /*add_special_tokens*/) const {}
  // How many tokens PostProcess adds in all with add_special_tokens (default
  // 0).
  virtual size_t NumTemplateTokens(bool /*pair*/) const { return 0; }

 private:
  absl::StatusOr<std::vector<Encoding>> EncodeTruncatedImpl(
      std::string_view first, std::optional<std::string_view> second,
      const TruncationOptions& truncation, bool return_overflowing,
      bool add_special_tokens) const;
};

// Loads from an HF tokenizer folder, a vocab.json (merges.txt beside it), a BERT vocab.txt,
// a tokenizer.json (byte-level BPE or WordPiece, by its model.type) or a sentencepiece .model
// file. In a folder the first found wins: vocab.json + merges.txt, spiece.model /
// tokenizer.model, tokenizer.json, vocab.txt. NotFound / InvalidArgument with the file name for
// missing or bad files; Unimplemented for tokenizer.json pipelines not supported.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& path);

struct SentencePieceTrainOptions {
  std::string model_type = "bpe";  // "bpe" | "unigram"
  int vocab_size = 2000;
  uint64_t seed = 42;                // Training is deterministic for a given seed and input.
  int64_t max_sentences = 200000;    // Input lines sampled for training.
};

// Trains a sentencepiece model on the lines of `text_file`, writes it to `model_path`
// (…/spiece.model) and loads it. Special pieces: <pad>=0, <unk>=1, <s>=2, </s>=3, and the
// user-defined <mask>=4 (MaskId(); encoded from text as one piece).
absl::StatusOr<std::unique_ptr<Tokenizer>> TrainSentencePiece(
    const std::string& text_file, const std::string& model_path,
    const SentencePieceTrainOptions& options);

}  // namespace lmtrain
