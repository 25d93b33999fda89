#include "text/tokenizers/sentencepiece_tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/hf_config_files.h"
#include "text/tokenizers/internal/line_sampler.h"

namespace lmtrain {
namespace {

namespace ti = tokenizers_internal;

constexpr char kMaskPiece[] = "<mask>";

// For sentencepiece's own generator (32 bits; 0xFFFFFFFF means "from
// std::random_device").
uint32_t FoldSeed(uint64_t seed) {
  const auto folded = static_cast<uint32_t>(seed ^ (seed >> 32));
  return folded == 0xFFFFFFFFu ? 0xFFFFFFFEu : folded;
}

absl::Status CheckTrainOptions(const SentencePieceTrainOptions& options) {
  if (options.model_type != "bpe" && options.model_type != "unigram") {
    return absl::InvalidArgumentError(
        absl::StrCat("sentencepiece model_type must be \"bpe\" or \"unigram\" (got \"",
                     options.model_type, "\")"));
  }
  if (options.vocab_size < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("sentencepiece vocab_size must be >= 8 (got ", options.vocab_size, ")"));
  }
  if (options.max_sentences <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sentencepiece max_sentences must be > 0 (got ", options.max_sentences, ")"));
  }
  return absl::OkStatus();
}

// spm_train flags; see SentencePieceTokenizer::Train for the choices. The
// sentences are passed in memory (already sampled), so no "input" flag: the
// model then records no file path.
std::vector<std::pair<std::string, std::string>> TrainFlags(
    const SentencePieceTrainOptions& options) {
  return {{"model_type", options.model_type},
          {"vocab_size", std::to_string(options.vocab_size)},
          {"num_threads", "1"},
          {"pad_id", "0"},
          {"unk_id", "1"},
          {"bos_id", "2"},
          {"eos_id", "3"},
          // Right after the control pieces, so <mask> is id 4.
          {"user_defined_symbols", kMaskPiece},
          {"byte_fallback", "false"},
          {"normalization_rule_name", "nmt_nfkc"},
          {"hard_vocab_limit", "false"},
          {"minloglevel", "1"}};
}

absl::StatusOr<std::string> RunTrainer(const ti::SpmLibrary& lib, const std::string& text_file,
                                       const std::vector<std::string>& sentences,
                                       const SentencePieceTrainOptions& options) {
  const auto flags = TrainFlags(options);
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : flags) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  std::vector<const char*> texts;
  std::vector<size_t> sizes;
  for (const std::string& sentence : sentences) {
    texts.push_back(sentence.data());
    sizes.push_back(sentence.size());
  }
  char* model = nullptr;
  size_t size = 0;
  const int rc = lib.train(keys.data(), values.data(), flags.size(), texts.data(), sizes.data(),
                           texts.size(), FoldSeed(options.seed), &model, &size);
  if (rc != 0) return lib.Error(rc, absl::StrCat("sentencepiece training on ", text_file));
  std::string bytes(model, size);
  lib.free_buffer(model);
  return bytes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::FromFile(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ti::ReadFile(path));
  return FromSerialized(std::move(bytes), path);
}

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::FromSerialized(
    std::string bytes, const std::string& source) {
  ASSIGN_OR_RETURN(const ti::SpmLibrary* lib, ti::GetSpmLibrary());
  LmtrainSpmModel* model = nullptr;
  const int rc = lib->load(bytes.data(), bytes.size(), &model);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a sentencepiece model (", lib->last_error(), ")"));
  }
  return std::unique_ptr<SentencePieceTokenizer>(
      new SentencePieceTokenizer(lib, model, std::move(bytes)));
}

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Train(
    const std::string& text_file, const std::string& model_path,
    const SentencePieceTrainOptions& options) {
  RETURN_IF_ERROR(CheckTrainOptions(options));
  ASSIGN_OR_RETURN(const std::vector<std::string> sentences,
                   ti::SampleLines(text_file, options.max_sentences, options.seed));
  if (sentences.empty()) {
    return absl::InvalidArgumentError(text_file + ": no text to train sentencepiece on");
  }
  ASSIGN_OR_RETURN(const ti::SpmLibrary* lib, ti::GetSpmLibrary());
  ASSIGN_OR_RETURN(std::string bytes, RunTrainer(*lib, text_file, sentences, options));
  RETURN_IF_ERROR(ti::WriteFile(model_path, bytes));
  return FromSerialized(std::move(bytes), model_path);
}

SentencePieceTokenizer::SentencePieceTokenizer(const ti::SpmLibrary* lib, LmtrainSpmModel* model,
                                               std::string bytes)
    : lib_(lib), model_(model), bytes_(std::move(bytes)), vocab_size_(lib->vocab_size(model)) {}

SentencePieceTokenizer::~SentencePieceTokenizer() { lib_->free_model(model_); }

std::vector<int32_t> SentencePieceTokenizer::Encode(std::string_view text) const {
  int32_t* ids = nullptr;
  size_t count = 0;
  // Fails only for an unloaded model, which this class never holds.
  if (lib_->encode(model_, text.data(), text.size(), &ids, &count) != 0) return {};
  std::vector<int32_t> result(ids, ids + count);
  lib_->free_buffer(ids);
  return result;
}

Encoding SentencePieceTokenizer::EncodeSequence(std::string_view text) const {
  int32_t* ids = nullptr;
  uint32_t* spans = nullptr;
  size_t count = 0;
  Encoding encoding;
  // Fails only for an unloaded model, which this class never holds.
  if (lib_->encode_with_spans(model_, text.data(), text.size(), &ids, &spans, &count) != 0) {
    return encoding;
  }
  encoding.Reserve(count);
  int word = -1;
  for (size_t i = 0; i < count; ++i) {
    std::string token = IdToToken(ids[i]);
    // Metaspace words: a piece spelled with the leading "▁" starts one.
    if (word < 0 || token.rfind("\xe2\x96\x81", 0) == 0) ++word;
    size_t begin = std::min<size_t>(spans[2 * i], text.size());
    const size_t end = std::clamp<size_t>(spans[2 * i + 1], begin, text.size());
    // The surface of "▁word" includes the space before it; the offset does
    // not (as the other tokenizers' offsets).
    while (begin < end && absl::ascii_isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    encoding.Push(ids[i], std::move(token), {begin, end}, word, 0, 0,
                  /*special=*/false);
  }
  lib_->free_buffer(ids);
  lib_->free_buffer(spans);
  return encoding;
}

bool SentencePieceTokenizer::IsSpecialPiece(int32_t id) const {
  const int kind = lib_->piece_kind(model_, id);
  return kind == LMTRAIN_SPM_PIECE_CONTROL || kind == LMTRAIN_SPM_PIECE_UNKNOWN;
}

void SentencePieceTokenizer::DecodeRun(const std::vector<int32_t>& run, std::string* out) const {
  if (run.empty()) return;
  char* text = nullptr;
  size_t size = 0;
  if (lib_->decode(model_, run.data(), run.size(), &text, &size) != 0) return;
  out->append(text, size);
  lib_->free_buffer(text);
}

std::string SentencePieceTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string out;
  std::vector<int32_t> run;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size_) continue;
    if (!IsSpecialPiece(id)) {
      run.push_back(id);
      continue;
    }
    DecodeRun(run, &out);
    run.clear();
    out += IdToToken(id);
  }
  DecodeRun(run, &out);
  return out;
}

std::string SentencePieceTokenizer::IdToToken(int32_t id) const {
  const char* piece = nullptr;
  size_t size = 0;
  if (lib_->id_to_piece(model_, id, &piece, &size) != 0) return "";
  return std::string(piece, size);
}

std::optional<int32_t> SentencePieceTokenizer::TokenToId(std::string_view token) const {
  const int32_t id = lib_->piece_to_id(model_, token.data(), token.size());
  if (id < 0) return std::nullopt;
  return id;
}

std::optional<int32_t> SentencePieceTokenizer::MaskId() const { return TokenToId(kMaskPiece); }

std::optional<int32_t> SentencePieceTokenizer::UnkId() const { return Special(LMTRAIN_SPM_UNK); }

std::optional<int32_t> SentencePieceTokenizer::Special(int which) const {
  const int32_t id = lib_->special_id(model_, which);
  if (id < 0) return std::nullopt;
  return id;
}

absl::Status SentencePieceTokenizer::SaveTo(const std::string& dir) const {
  if (!ti::IsDirectory(dir)) return absl::NotFoundError(dir + ": no such directory");
  RETURN_IF_ERROR(ti::WriteFile(ti::JoinPath(dir, "spiece.model"), bytes_));
  ti::SpecialTokenNames names;
  const std::pair<std::optional<int32_t>, std::string*> roles[] = {
      {BosId(), &names.bos},
      {EosId(), &names.eos},
      {Special(LMTRAIN_SPM_UNK), &names.unk},
      {PadId(), &names.pad}};
  for (const auto& [id, name] : roles) {
    if (id) *name = IdToToken(*id);
  }
  // T5Tokenizer reads spiece.model as is; extra_ids 0 stops it from adding
  // <extra_id_*> tokens.
  nlohmann::ordered_json extra = {{"extra_ids", 0},
                                  {"additional_special_tokens", nlohmann::json::array()},
                                  {"sp_model_kwargs", nlohmann::json::object()},
                                  {"legacy", true}};
  if (MaskId()) extra["mask_token"] = kMaskPiece;
  return ti::WriteHfTokenizerConfig(dir, names, "T5Tokenizer", extra);
}

}  // namespace lmtrain
