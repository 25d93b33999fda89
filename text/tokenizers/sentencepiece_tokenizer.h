// SentencePieceTokenizer: a sentencepiece .model (BPE or unigram), run through
// the dlopen()ed shim (text/spm/, see internal/spm_library.h), plus training
// of new models.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/spm/spm_shim.h"
#include "text/tokenizers/internal/spm_library.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

// Encode applies the model's normalizer and segmentation (no BOS/EOS added).
// EncodeWithOffsets takes each piece's offsets from sentencepiece's own
// alignment of pieces to input bytes, so they stay exact when normalization
// (NFKC, lower-casing, whitespace folding) changed the text; the space that a
// "▁" piece stands for is left out of its range. Word ids count the pieces that
// start a "▁" word (Metaspace). No template is added.
// Decode turns runs of ordinary pieces back into text through sentencepiece and
// writes control and unknown pieces
// ("<s>", "</s>", "<pad>", "<unk>") as their own text, as Hugging Face's
// T5Tokenizer does; ids outside the vocabulary are skipped.
//
// Immutable after construction; every method may be called from several threads
// at once. Owns the shim's model (freed on destruction) and a copy of the model
// file's bytes. Not copyable.
class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads the .model file at `path`. NotFound when missing; InvalidArgument
  // naming the file when it is not a sentencepiece model; FailedPrecondition
  // when the shim cannot be loaded.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> FromFile(const std::string& path);

  // Loads a model from its serialized bytes; `source` names it in errors.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> FromSerialized(
      std::string bytes, const std::string& source);

  // Trains on the non-blank lines of `text_file` as TrainSentencePiece
  // (tokenizer.h) documents. At most `options.max_sentences` lines, sampled
  // with `options.seed` when the file has more (see internal/line_sampler.h).
  // Pieces <pad>=0 <unk>=1 <s>=2 </s>=3, the user-defined <mask>=4 (always
  // encoded as one piece), nmt_nfkc normalization, no byte
  // fallback, a soft vocabulary limit (a tiny corpus gives a smaller vocabulary
  // instead of failing), one trainer thread: the model bytes are a function of
  // the options and the file's contents (not its path). Writes `model_path`
  // (its directory must exist), loads it. InvalidArgument for bad options or a
  // file without text; NotFound for a missing `text_file`; sentencepiece's own
  // errors with its message.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Train(
      const std::string& text_file, const std::string& model_path,
      const SentencePieceTrainOptions& options);

  ~SentencePieceTokenizer() override;
  SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
  SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

  std::vector<int32_t> Encode(std::string_view text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  int32_t VocabSize() const override { return vocab_size_; }
  std::string IdToToken(int32_t id) const override;
  std::optional<int32_t> TokenToId(std::string_view token) const override;
  std::optional<int32_t> EosId() const override { return Special(LMTRAIN_SPM_EOS); }
  std::optional<int32_t> BosId() const override { return Special(LMTRAIN_SPM_BOS); }
  std::optional<int32_t> PadId() const override { return Special(LMTRAIN_SPM_PAD); }
  std::optional<int32_t> UnkId() const override;
  // The "<mask>" piece when the model has one (models from Train do, id 4).
  std::optional<int32_t> MaskId() const override;
  // Writes spiece.model, tokenizer_config.json (T5Tokenizer, extra_ids 0) and
  // special_tokens_map.json, which transformers' AutoTokenizer loads.
  absl::Status SaveTo(const std::string& dir) const override;

 protected:
  Encoding EncodeSequence(std::string_view text) const override;

 private:
  SentencePieceTokenizer(const tokenizers_internal::SpmLibrary* lib, LmtrainSpmModel* model,
                         std::string bytes);
  std::optional<int32_t> Special(int which) const;
  bool IsSpecialPiece(int32_t id) const;
  void DecodeRun(const std::vector<int32_t>& run, std::string* out) const;

  const tokenizers_internal::SpmLibrary* const lib_;  // Process-lifetime; not owned.
  LmtrainSpmModel* const model_;                      // Owned; freed through lib_.
  const std::string bytes_;                           // The serialized model.
  const int32_t vocab_size_;
};

}  // namespace lmtrain
