#include "text/tokenizers/wordpiece_tokenizer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/absl_view.h"
#include "text/tokenizers/internal/bert_normalizer.h"
#include "text/tokenizers/internal/bert_pretokenizer.h"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/hf_config_files.h"
#include "text/tokenizers/internal/normalized_text.h"
#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain {
namespace {

namespace ti = tokenizers_internal;

// vocab.txt may repeat a token: the last id wins, as in Hugging Face's WordPiece.
ti::TokenIdMap LastIdOfEachToken(const std::vector<std::string>& id_to_token) {
  ti::TokenIdMap map;
  map.reserve(id_to_token.size());
  for (size_t id = 0; id < id_to_token.size(); ++id) {
    if (!id_to_token[id].empty()) map[id_to_token[id]] = static_cast<int32_t>(id);
  }
  return map;
}

std::vector<std::pair<std::string, int32_t>> AddedTokenIds(const ti::WordPieceFiles& files,
                                                           const ti::TokenIdMap& vocab) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const std::string& token : files.added_tokens) {
    auto it = vocab.find(token);
    if (it != vocab.end()) out.emplace_back(token, it->second);
  }
  return out;
}

// transformers' clean_up_tokenization, also what HF's WordPiece decoder
// applies to each token.
std::string CleanUpTokenization(std::string_view text) {
  return absl::StrReplaceAll(ti::AbslView(text), {{" .", "."},
                                                  {" ?", "?"},
                                                  {" !", "!"},
                                                  {" ,", ","},
                                                  {" ' ", "'"},
                                                  {" n't", "n't"},
                                                  {" 'm", "'m"},
                                                  {" 's", "'s"},
                                                  {" 've", "'ve"},
                                                  {" 're", "'re"}});
}

}  // namespace

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::FromVocabTxt(
    const std::string& path) {
  ASSIGN_OR_RETURN(ti::WordPieceFiles files, ti::ReadVocabTxt(path));
  return Create(std::move(files));
}

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::FromTokenizerJson(
    const std::string& path) {
  ASSIGN_OR_RETURN(ti::WordPieceFiles files, ti::ReadWordPieceTokenizerJson(path));
  return Create(std::move(files));
}

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Create(
    ti::WordPieceFiles files) {
  ti::TokenIdMap vocab = LastIdOfEachToken(files.id_to_token);
  auto unk = vocab.find(files.unk_token);
  if (unk == vocab.end()) {
    return absl::InvalidArgumentError(absl::StrCat(files.source, ": the unknown token \"",
                                                   files.unk_token, "\" is not in the vocabulary"));
  }
  for (const auto* part : {&files.single_before, &files.single_after, &files.pair_before,
                           &files.pair_between, &files.pair_after}) {
    for (const ti::TemplateToken& t : *part) {
      if (!vocab.contains(t.token)) {
        return absl::InvalidArgumentError(absl::StrCat(files.source, ": the template token \"",
                                                       t.token, "\" is not in the vocabulary"));
      }
    }
  }
  const int32_t unk_id = unk->second;
  return std::unique_ptr<WordPieceTokenizer>(
      new WordPieceTokenizer(std::move(files), std::move(vocab), unk_id));
}

WordPieceTokenizer::WordPieceTokenizer(ti::WordPieceFiles files, ti::TokenIdMap token_to_id,
                                       int32_t unk_id)
    : files_(std::move(files)),
      token_to_id_(std::move(token_to_id)),
      model_(files_.id_to_token, unk_id, files_.prefix, files_.max_input_chars_per_word),
      special_matcher_(AddedTokenIds(files_, token_to_id_)),
      unk_id_(unk_id),
      cls_id_(RoleId(files_.cls_token)),
      sep_id_(RoleId(files_.sep_token)),
      pad_id_(RoleId(files_.pad_token)),
      mask_id_(RoleId(files_.mask_token)) {}

std::optional<int32_t> WordPieceTokenizer::RoleId(const std::string& token) const {
  if (token.empty()) return std::nullopt;
  return TokenToId(token);
}

void WordPieceTokenizer::EncodePiece(std::string_view text, size_t begin, size_t end, int* word_id,
                                     Encoding* encoding) const {
  ti::NormalizedText normalized = ti::NormalizedText::FromUtf8(text.substr(begin, end - begin));
  ti::BertNormalize(files_.normalizer, &normalized);
  // Reused across words: the word's UTF-8 and, per byte, its character.
  std::string word;
  std::vector<size_t> char_of_byte;
  std::vector<ti::WordPieceModel::Piece> pieces;
  for (const auto& [first, last] : ti::SplitBertWords(normalized.chars)) {
    word.clear();
    char_of_byte.clear();
    for (size_t c = first; c < last; ++c) {
      const size_t before = word.size();
      ti::AppendUtf8(normalized.chars[c], &word);
      char_of_byte.insert(char_of_byte.end(), word.size() - before, c);
    }
    pieces.clear();
    model_.Tokenize(word, last - first, &pieces);
    for (const auto& piece : pieces) {
      const size_t from = normalized.spans[char_of_byte[piece.begin]].first;
      const size_t to = normalized.spans[char_of_byte[piece.end - 1]].second;
      encoding->Push(piece.id, files_.id_to_token[piece.id], {begin + from, begin + to}, *word_id,
                     0, 0,
                     /*special=*/false);
    }
    ++*word_id;
  }
}

Encoding WordPieceTokenizer::EncodeSequence(std::string_view text) const {
  Encoding encoding;
  encoding.Reserve(text.size() / 4 + 4);  // About one token per 4-5 bytes.
  int word_id = 0;
  for (const auto& piece : special_matcher_.Split(text)) {
    if (piece.special_id) {
      encoding.Push(*piece.special_id, files_.id_to_token[*piece.special_id],
                    {piece.begin, piece.end}, word_id++, 0, 0,
                    /*special=*/false);
    } else {
      EncodePiece(text, piece.begin, piece.end, &word_id, &encoding);
    }
  }
  return encoding;
}

std::vector<int32_t> WordPieceTokenizer::Encode(std::string_view text) const {
  return EncodeSequence(text).ids;
}

void WordPieceTokenizer::AddTemplateTokens(const std::vector<ti::TemplateToken>& tokens,
                                           Encoding* encoding) const {
  for (const ti::TemplateToken& t : tokens) {
    encoding->Push(*TokenToId(t.token), t.token, {0, 0}, std::nullopt, std::nullopt, t.type_id,
                   /*special=*/true);
  }
}

void WordPieceTokenizer::PostProcess(Encoding* sequence, int index, bool pair,
                                     bool add_special_tokens) const {
  if (!add_special_tokens) return;
  const auto& before = !pair        ? files_.single_before
                       : index == 0 ? files_.pair_before
                                    : std::vector<ti::TemplateToken>{};
  const auto& after = !pair        ? files_.single_after
                      : index == 0 ? files_.pair_between
                                   : files_.pair_after;
  Encoding out;
  AddTemplateTokens(before, &out);
  out.Append(*sequence);
  AddTemplateTokens(after, &out);
  *sequence = std::move(out);
}

size_t WordPieceTokenizer::NumTemplateTokens(bool pair) const {
  if (!pair) return files_.single_before.size() + files_.single_after.size();
  return files_.pair_before.size() + files_.pair_between.size() + files_.pair_after.size();
}

std::string WordPieceTokenizer::Decode(const std::vector<int32_t>& ids) const {
  const std::string& prefix = files_.prefix;
  std::string text;
  bool first = true;
  for (int32_t id : ids) {
    if (id < 0 || id >= VocabSize()) continue;
    std::string token = files_.id_to_token[id];
    if (!first) {
      if (!prefix.empty() && token.compare(0, prefix.size(), prefix) == 0) {
        token.erase(0, prefix.size());
      } else {
        token.insert(0, " ");
      }
    }
    first = false;
    text += CleanUpTokenization(token);
  }
  return CleanUpTokenization(text);
}

std::string WordPieceTokenizer::IdToToken(int32_t id) const {
  return id >= 0 && id < VocabSize() ? files_.id_to_token[id] : std::string();
}

std::optional<int32_t> WordPieceTokenizer::TokenToId(std::string_view token) const {
  auto it = token_to_id_.find(ti::AbslView(token));
  if (it == token_to_id_.end()) return std::nullopt;
  return it->second;
}

absl::Status WordPieceTokenizer::SaveTo(const std::string& dir) const {
  if (!ti::IsDirectory(dir)) return absl::NotFoundError(dir + ": no such directory");
  std::string vocab;
  for (const std::string& token : files_.id_to_token) vocab += token + "\n";
  RETURN_IF_ERROR(ti::WriteFile(ti::JoinPath(dir, "vocab.txt"), vocab));
  ti::SpecialTokenNames names;
  names.unk = files_.unk_token;
  if (pad_id_) names.pad = files_.pad_token;
  nlohmann::ordered_json extra = {
      {"do_lower_case", files_.normalizer.lowercase},
      {"strip_accents", files_.normalizer.strip_accents},
      {"tokenize_chinese_chars", files_.normalizer.handle_chinese_chars}};
  if (cls_id_) extra["cls_token"] = files_.cls_token;
  if (sep_id_) extra["sep_token"] = files_.sep_token;
  if (mask_id_) extra["mask_token"] = files_.mask_token;
  return ti::WriteHfTokenizerConfig(dir, names, "BertTokenizer", extra);
}

}  // namespace lmtrain
