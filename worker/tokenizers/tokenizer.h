// Tokenizer: text <-> token ids. Torch-free; used by lm-train.
//
// Implementations (one concept per file): Gpt2BpeTokenizer (byte-level BPE from vocab.json +
// merges.txt, GPT-2 pre-tokenization) and SentencePieceTokenizer (a .model file through the
// sentencepiece shim, see worker/spm/). Instances are immutable after construction and safe to
// use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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
  // Writes the files that reload this tokenizer (here with LoadTokenizer, and in HF
  // transformers with AutoTokenizer): vocab.json + merges.txt, or spiece.model; plus
  // tokenizer_config.json and special_tokens_map.json. `dir` must exist.
  virtual absl::Status SaveTo(const std::string& dir) const = 0;
};

// Loads from an HF tokenizer folder, a vocab.json (merges.txt beside it) or a sentencepiece
// .model file. NotFound / InvalidArgument with the file name for missing or bad files.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& path);

struct SentencePieceTrainOptions {
  std::string model_type = "bpe";  // "bpe" | "unigram"
  int vocab_size = 2000;
  uint64_t seed = 42;                // Training is deterministic for a given seed and input.
  int64_t max_sentences = 200000;    // Input lines sampled for training.
};

// Trains a sentencepiece model on the lines of `text_file`, writes it to `model_path`
// (…/spiece.model) and loads it. Special pieces: <pad>=0, <unk>=1, <s>=2, </s>=3.
absl::StatusOr<std::unique_ptr<Tokenizer>> TrainSentencePiece(
    const std::string& text_file, const std::string& model_path,
    const SentencePieceTrainOptions& options);

}  // namespace lmtrain
