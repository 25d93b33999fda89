// LoadTokenizer's dispatch on the files present, TrainSentencePiece, and the
// Tokenizer methods shared by every implementation.
#include "text/tokenizers/tokenizer.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/tokenizers/gpt2_bpe_tokenizer.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/hf_wordpiece_files.h"
#include "text/tokenizers/internal/truncation.h"
#include "text/tokenizers/sentencepiece_tokenizer.h"
#include "text/tokenizers/wordpiece_tokenizer.h"

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

// tokenizer.json: WordPiece or byte-level BPE by its model.type.
TokenizerOr LoadTokenizerJson(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string type, ti::ReadTokenizerJsonModelType(path));
  if (type == "WordPiece") return Widen(WordPieceTokenizer::FromTokenizerJson(path));
  return Widen(Gpt2BpeTokenizer::FromTokenizerJson(path));
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
  if (ti::IsRegularFile(json)) return LoadTokenizerJson(json);
  const std::string vocab_txt = ti::JoinPath(dir, "vocab.txt");
  if (ti::IsRegularFile(vocab_txt))
    return Widen(WordPieceTokenizer::FromVocabTxt(vocab_txt));
  return absl::NotFoundError(absl::StrCat(
      dir,
      ": no tokenizer files (looked for vocab.json + merges.txt, spiece.model, "
      "tokenizer.model, tokenizer.json, vocab.txt)"));
}

TokenizerOr LoadFromFile(const std::string& path) {
  const std::string name = ti::BaseName(path);
  if (absl::EndsWith(name, ".model"))
    return Widen(SentencePieceTokenizer::FromFile(path));
  if (name == "tokenizer.json") return LoadTokenizerJson(path);
  if (absl::EndsWith(name, ".txt"))
    return Widen(WordPieceTokenizer::FromVocabTxt(path));
  if (absl::EndsWith(name, ".json")) {
    return Widen(Gpt2BpeTokenizer::FromFiles(
        path, ti::JoinPath(ti::DirName(path), "merges.txt")));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path,
                   ": not a tokenizer file (expected a folder, a vocab .json "
                   "with merges.txt beside it, a WordPiece vocab .txt, "
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

// The Encoding pipeline shared by every tokenizer: sequence -> truncation into
// windows -> post-processor -> pairs merged in HF's order.
namespace lmtrain {
namespace {

namespace ti = tokenizers_internal;

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// Counts whitespace-separated words while a cursor moves forward.
class WordCounter {
 public:
  explicit WordCounter(std::string_view text) : text_(text) {}
  // Index of the word at or before byte `pos` (0 before the first word).
  int WordAt(size_t pos) {
    for (; scanned_ <= pos && scanned_ < text_.size(); ++scanned_) {
      const bool space = IsAsciiSpace(text_[scanned_]);
      if (!space && previous_space_) ++words_;
      previous_space_ = space;
    }
    return words_ < 0 ? 0 : words_;
  }

 private:
  std::string_view text_;
  size_t scanned_ = 0;
  bool previous_space_ = true;
  int words_ = -1;
};

// Where `piece` starts when found at or after `cursor` past whitespace only.
std::optional<size_t> FindAfterSpaces(std::string_view text,
                                      std::string_view piece, size_t cursor) {
  while (cursor < text.size() && IsAsciiSpace(text[cursor])) ++cursor;
  if (piece.empty() || text.substr(cursor, piece.size()) != piece)
    return std::nullopt;
  return cursor;
}

// The windows of a single input, or the pairs of windows in HF's
// Encoding::merge_with order: kept + kept; then each overflow of the first
// sequence with the kept second, then with each overflow of the second; then
// the kept first with each overflow of the second.
std::vector<Encoding> MergeWindows(const ti::TruncatedSequences& windows,
                                   bool pair, bool return_overflowing) {
  auto merged = [&](size_t i, size_t j) {
    Encoding e = windows.first[i];
    if (pair) e.Append(windows.second[j]);
    return e;
  };
  std::vector<Encoding> out = {merged(0, 0)};
  if (!return_overflowing) return out;
  const size_t n2 = pair ? windows.second.size() : 1;
  for (size_t i = 1; i < windows.first.size(); ++i) {
    for (size_t j = 0; j < n2; ++j) out.push_back(merged(i, j));
  }
  for (size_t j = 1; j < n2; ++j) out.push_back(merged(0, j));
  return out;
}

}  // namespace

Encoding Tokenizer::EncodeSequence(std::string_view text) const {
  Encoding encoding;
  WordCounter words(text);
  size_t cursor = 0;
  for (int32_t id : Encode(text)) {
    std::string piece = Decode({id});
    const size_t lead = piece.find_first_not_of(" ");
    piece.erase(0, lead == std::string::npos ? piece.size() : lead);
    size_t begin = cursor, end = cursor;
    if (std::optional<size_t> found = FindAfterSpaces(text, piece, cursor)) {
      begin = *found;
      end = cursor = begin + piece.size();
    }
    encoding.Push(id, IdToToken(id), {begin, end}, words.WordAt(begin), 0, 0,
                  /*special=*/false);
  }
  return encoding;
}

Encoding Tokenizer::EncodeWithOffsets(std::string_view text,
                                      bool add_special_tokens) const {
  Encoding encoding = EncodeSequence(text);
  PostProcess(&encoding, 0, /*pair=*/false, add_special_tokens);
  return encoding;
}

absl::StatusOr<std::vector<Encoding>> Tokenizer::EncodePair(
    std::string_view first, std::string_view second,
    const TruncationOptions& truncation, bool return_overflowing,
    bool add_special_tokens) const {
  return EncodeTruncatedImpl(first, second, truncation, return_overflowing,
                             add_special_tokens);
}

absl::StatusOr<std::vector<Encoding>> Tokenizer::EncodeTruncated(
    std::string_view text, const TruncationOptions& truncation,
    bool return_overflowing, bool add_special_tokens) const {
  return EncodeTruncatedImpl(text, std::nullopt, truncation,
                             return_overflowing, add_special_tokens);
}

absl::StatusOr<std::vector<Encoding>> Tokenizer::EncodeTruncatedImpl(
    std::string_view first, std::optional<std::string_view> second,
    const TruncationOptions& truncation, bool return_overflowing,
    bool add_special_tokens) const {
  const bool pair = second.has_value();
  Encoding a = EncodeSequence(first);
  std::optional<Encoding> b;
  if (pair) {
    b = EncodeSequence(*second);
    for (int32_t& type : b->type_ids) type = 1;
    for (std::optional<int>& sequence : b->sequence_ids) sequence = 1;
  }
  ti::TruncatedSequences windows{{a}, {}};
  if (pair) windows.second = {*b};
  if (truncation.max_length > 0) {
    const size_t added = add_special_tokens ? NumTemplateTokens(pair) : 0;
    if (truncation.max_length < added) {
      return absl::InvalidArgumentError(absl::StrCat(
          "truncation max_length ", truncation.max_length, " is below the ",
          added, " special tokens the template adds"));
    }
    ASSIGN_OR_RETURN(windows, ti::TruncateSequences(
                                  a, b, truncation.max_length - added,
                                  truncation.stride, truncation.strategy));
  }
  for (Encoding& w : windows.first) PostProcess(&w, 0, pair, add_special_tokens);
  for (Encoding& w : windows.second) PostProcess(&w, 1, pair, add_special_tokens);
  return MergeWindows(windows, pair, return_overflowing);
}

absl::Status Tokenizer::Pad(std::vector<Encoding>* batch,
                            const PaddingOptions& options) const {
  const std::optional<int32_t> pad = PadId();
  if (!pad) {
    return absl::FailedPreconditionError(
        "cannot pad: the tokenizer has no padding token");
  }
  PadEncodings(batch, options, *pad, IdToToken(*pad));
  return absl::OkStatus();
}

}  // namespace lmtrain
