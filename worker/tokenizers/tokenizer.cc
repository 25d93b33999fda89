// LoadTokenizer's dispatch on the files present, and TrainSentencePiece.
#include "worker/tokenizers/tokenizer.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "worker/tokenizers/gpt2_bpe_tokenizer.h"
#include "worker/tokenizers/internal/file_util.h"
#include "worker/tokenizers/sentencepiece_tokenizer.h"

namespace lmtrain {
namespace {

namespace ti = tokenizers_internal;

using TokenizerOr = absl::StatusOr<std::unique_ptr<Tokenizer>>;

// Widens a concrete tokenizer result to the interface.
template <typename T>
TokenizerOr Widen(absl::StatusOr<std::unique_ptr<T>> result) {
  if (!result.ok()) return result.status();
  return std::unique_ptr<Tokenizer>(std::move(result).value());
}

TokenizerOr LoadFromDirectory(const std::string& dir) {
  const std::string vocab = ti::JoinPath(dir, "vocab.json");
  const std::string merges = ti::JoinPath(dir, "merges.txt");
  const bool has_vocab = ti::IsRegularFile(vocab);
  const bool has_merges = ti::IsRegularFile(merges);
  if (has_vocab && has_merges)
    return Widen(Gpt2BpeTokenizer::FromFiles(vocab, merges));
  if (has_vocab != has_merges) {
    return absl::NotFoundError(
        absl::StrCat(has_vocab ? merges : vocab, ": no such file (",
                     has_vocab ? vocab : merges, " needs it beside it)"));
  }
  for (const char* name : {"spiece.model", "tokenizer.model"}) {
    const std::string model = ti::JoinPath(dir, name);
    if (ti::IsRegularFile(model))
      return Widen(SentencePieceTokenizer::FromFile(model));
  }
  const std::string json = ti::JoinPath(dir, "tokenizer.json");
  if (ti::IsRegularFile(json))
    return Widen(Gpt2BpeTokenizer::FromTokenizerJson(json));
  return absl::NotFoundError(absl::StrCat(
      dir,
      ": no tokenizer files (looked for vocab.json + merges.txt, spiece.model, "
      "tokenizer.model, tokenizer.json)"));
}

TokenizerOr LoadFromFile(const std::string& path) {
  const std::string name = ti::BaseName(path);
  if (absl::EndsWith(name, ".model"))
    return Widen(SentencePieceTokenizer::FromFile(path));
  if (name == "tokenizer.json")
    return Widen(Gpt2BpeTokenizer::FromTokenizerJson(path));
  if (absl::EndsWith(name, ".json")) {
    return Widen(Gpt2BpeTokenizer::FromFiles(
        path, ti::JoinPath(ti::DirName(path), "merges.txt")));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path,
                   ": not a tokenizer file (expected a folder, a vocab .json "
                   "with merges.txt beside it, "
                   "tokenizer.json or a sentencepiece .model)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(
    const std::string& path) {
  if (ti::IsDirectory(path)) return LoadFromDirectory(path);
  if (ti::IsRegularFile(path)) return LoadFromFile(path);
  return absl::NotFoundError(
      absl::StrCat(path, ": no such tokenizer file or folder"));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> TrainSentencePiece(
    const std::string& text_file, const std::string& model_path,
    const SentencePieceTrainOptions& options) {
  return Widen(SentencePieceTokenizer::Train(text_file, model_path, options));
}

}  // namespace lmtrain
