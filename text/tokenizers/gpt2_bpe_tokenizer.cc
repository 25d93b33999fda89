#include "text/tokenizers/gpt2_bpe_tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/absl_view.h"
#include "text/tokenizers/internal/byte_level.h"
#include "text/tokenizers/internal/byte_level_offsets.h"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/gpt2_pretokenizer.h"
#include "text/tokenizers/internal/hf_tokenizer_json.h"
#include "text/tokenizers/internal/unicode_text.h"
#include "text/tokenizers/internal/vocab_json.h"

namespace lmtrain {
namespace {

namespace ti = tokenizers_internal;

constexpr char kEndOfText[] = "<|endoftext|>";

ti::TokenIdMap FirstIdOfEachToken(const std::vector<std::string>& id_to_token) {
  ti::TokenIdMap map;
  map.reserve(id_to_token.size());
  for (size_t id = 0; id < id_to_token.size(); ++id) {
    if (!id_to_token[id].empty())
      map.emplace(id_to_token[id], static_cast<int32_t>(id));
  }
  return map;
}

// special_tokens_map.json in `dir` when present; else GPT-2's convention, where
// "<|endoftext|>" is bos, eos and unk. `extra` (tokenizer.json's special added
// tokens) become additional ones.
absl::StatusOr<ti::SpecialTokenNames> SpecialTokensFor(
    const std::string& dir, const ti::TokenIdMap& vocab,
    const std::vector<std::string>& extra) {
  ti::SpecialTokenNames names;
  const std::string map_path = ti::JoinPath(dir, "special_tokens_map.json");
  if (ti::IsRegularFile(map_path)) {
    ASSIGN_OR_RETURN(names, ti::ReadSpecialTokensMap(map_path));
  } else if (vocab.contains(kEndOfText)) {
    names.bos = names.eos = names.unk = kEndOfText;
  }
  for (const std::string& token : extra) {
    const bool known =
        token == names.bos || token == names.eos || token == names.unk ||
        token == names.pad ||
        std::find(names.additional.begin(), names.additional.end(), token) !=
            names.additional.end();
    if (!known) names.additional.push_back(token);
  }
  return names;
}

// The special tokens of `names` that are in the vocabulary, with their ids.
std::vector<std::pair<std::string, int32_t>> SplitTokens(
    const ti::SpecialTokenNames& names, const ti::TokenIdMap& vocab) {
  std::vector<std::string> tokens = names.additional;
  for (const std::string* role : {&names.bos, &names.eos, &names.unk, &names.pad})
    tokens.push_back(*role);
  std::vector<std::pair<std::string, int32_t>> out;
  for (const std::string& token : tokens) {
    auto it = vocab.find(token);
    if (!token.empty() && it != vocab.end()) out.emplace_back(token, it->second);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::FromFiles(
    const std::string& vocab_json, const std::string& merges_txt) {
  Parts parts;
  parts.source = vocab_json;
  ASSIGN_OR_RETURN(std::string vocab_text, ti::ReadFile(vocab_json));
  ASSIGN_OR_RETURN(std::string merges_text, ti::ReadFile(merges_txt));
  ASSIGN_OR_RETURN(parts.id_to_token,
                   ti::ParseVocabJson(vocab_text, vocab_json));
  parts.token_to_id = FirstIdOfEachToken(parts.id_to_token);
  ASSIGN_OR_RETURN(parts.merges, ti::ParseMergesTxt(merges_text, merges_txt, parts.token_to_id));
  ASSIGN_OR_RETURN(parts.specials,
                   SpecialTokensFor(ti::DirName(vocab_json), parts.token_to_id, {}));
  return Create(std::move(parts));
}

absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>>
Gpt2BpeTokenizer::FromTokenizerJson(const std::string& path) {
  ASSIGN_OR_RETURN(ti::ByteLevelBpeFiles files,
                   ti::ReadByteLevelBpeTokenizerJson(path));
  Parts parts;
  parts.source = path;
  parts.id_to_token = std::move(files.id_to_token);
  parts.merges = std::move(files.merges);
  parts.token_to_id = FirstIdOfEachToken(parts.id_to_token);
  ASSIGN_OR_RETURN(parts.specials,
                   SpecialTokensFor(ti::DirName(path), parts.token_to_id, files.special_tokens));
  return Create(std::move(parts));
}

absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::Create(
    Parts parts) {
  const ti::TokenIdMap& vocab = parts.token_to_id;
  // Every byte needs a symbol, so that any text encodes without loss.
  std::array<int32_t, 256> byte_ids;
  for (int b = 0; b < 256; ++b) {
    const std::string symbol =
        ti::ByteLevelEncode(std::string(1, static_cast<char>(b)));
    auto it = vocab.find(symbol);
    if (it == vocab.end()) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", b);
      return absl::InvalidArgumentError(absl::StrCat(
          parts.source, ": not a byte-level BPE vocabulary: no token \"",
          symbol, "\" for byte ", hex));
    }
    byte_ids[b] = it->second;
  }
  return std::unique_ptr<Gpt2BpeTokenizer>(new Gpt2BpeTokenizer(std::move(parts), byte_ids));
}

Gpt2BpeTokenizer::Gpt2BpeTokenizer(Parts parts, const std::array<int32_t, 256>& byte_ids)
    : id_to_token_(std::move(parts.id_to_token)),
      merges_(std::move(parts.merges)),
      specials_(std::move(parts.specials)),
      token_to_id_(std::move(parts.token_to_id)),
      special_matcher_(SplitTokens(specials_, token_to_id_)),
      bpe_(byte_ids, merges_) {
  id_to_bytes_.reserve(id_to_token_.size());
  for (const std::string& token : id_to_token_) {
    // Tokens outside the byte map (added tokens) decode to their own text, as
    // in HF.
    id_to_bytes_.push_back(ti::ByteLevelDecode(token).value_or(token));
  }
  bos_id_ = IdOfSpecial(specials_.bos);
  eos_id_ = IdOfSpecial(specials_.eos);
  pad_id_ = IdOfSpecial(specials_.pad);
  unk_id_ = IdOfSpecial(specials_.unk);
}

std::optional<int32_t> Gpt2BpeTokenizer::IdOfSpecial(
    const std::string& token) const {
  if (token.empty()) return std::nullopt;
  return TokenToId(token);
}

void Gpt2BpeTokenizer::EncodeOrdinaryText(std::string_view text,
                                          std::vector<int32_t>* ids) const {
  for (std::string_view word : ti::SplitGpt2Words(text))
    bpe_.EncodeWord(word, ids);
}

std::vector<int32_t> Gpt2BpeTokenizer::Encode(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const auto& piece : special_matcher_.Split(text)) {
    if (piece.special_id) {
      ids.push_back(*piece.special_id);
    } else {
      EncodeOrdinaryText(text.substr(piece.begin, piece.end - piece.begin),
                         &ids);
    }
  }
  return ids;
}

std::string Gpt2BpeTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id >= 0 && id < VocabSize()) bytes += id_to_bytes_[id];
  }
  return ti::ToValidUtf8(bytes);
}

std::string Gpt2BpeTokenizer::IdToToken(int32_t id) const {
  return id >= 0 && id < VocabSize() ? id_to_token_[id] : std::string();
}

std::optional<int32_t> Gpt2BpeTokenizer::TokenToId(
    std::string_view token) const {
  auto it = token_to_id_.find(ti::AbslView(token));
  if (it == token_to_id_.end()) return std::nullopt;
  return it->second;
}

std::string Gpt2BpeTokenizer::VocabJson() const {
  // Written by hand in id order: nlohmann::ordered_json inserts in linear time
  // per key, which is quadratic for 50k tokens.
  std::string text = "{";
  for (size_t id = 0; id < id_to_token_.size(); ++id) {
    if (id_to_token_[id].empty()) continue;
    if (text.size() > 1) text += ", ";
    const std::string key =
        nlohmann::json(id_to_token_[id])
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    absl::StrAppend(&text, key, ": ", id);
  }
  return text + "}";
}

std::string Gpt2BpeTokenizer::MergesTxt() const {
  std::string text = "#version: 0.2\n";
  for (const ti::BpeMerge& merge : merges_) {
    absl::StrAppend(&text, id_to_token_[merge.left], " ",
                    id_to_token_[merge.right], "\n");
  }
  return text;
}

absl::Status Gpt2BpeTokenizer::SaveTo(const std::string& dir) const {
  if (!ti::IsDirectory(dir))
    return absl::NotFoundError(dir + ": no such directory");
  RETURN_IF_ERROR(ti::WriteFile(ti::JoinPath(dir, "vocab.json"), VocabJson()));
  RETURN_IF_ERROR(ti::WriteFile(ti::JoinPath(dir, "merges.txt"), MergesTxt()));
  const nlohmann::ordered_json extra = {{"add_prefix_space", false},
                                        {"errors", "replace"}};
  return ti::WriteHfTokenizerConfig(dir, specials_, "GPT2Tokenizer", extra);
}

// Offsets (see the class comment).
void Gpt2BpeTokenizer::EncodeWordWithOffsets(std::string_view text,
                                             std::string_view word,
                                             int word_id,
                                             Encoding* encoding) const {
  const bool ascii = std::all_of(word.begin(), word.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80;
  });
  // Byte -> the range of its character; only needed beyond ASCII.
  const auto spans = ascii ? std::vector<std::pair<size_t, size_t>>()
                           : ti::CharSpansOfBytes(word);
  const size_t base = static_cast<size_t>(word.data() - text.data());
  std::vector<int32_t> ids;
  bpe_.EncodeWord(word, &ids);
  size_t pos = 0;
  for (int32_t id : ids) {
    const size_t length = id_to_bytes_[id].size();
    const std::pair<size_t, size_t> offset =
        ascii ? std::make_pair(base + pos, base + pos + length)
              : std::make_pair(base + spans[pos].first,
                               base + spans[pos + length - 1].second);
    encoding->Push(id, id_to_token_[id], offset, word_id, 0, 0,
                   /*special=*/false);
    pos += length;
  }
}

Encoding Gpt2BpeTokenizer::EncodeSequence(std::string_view text) const {
  Encoding encoding;
  encoding.Reserve(text.size() / 4 + 4);  // About one token per 4-5 bytes.
  int word_id = 0;
  for (const auto& piece : special_matcher_.Split(text)) {
    if (piece.special_id) {
      encoding.Push(*piece.special_id, id_to_token_[*piece.special_id],
                    {piece.begin, piece.end}, word_id++, 0, 0,
                    /*special=*/false);
      continue;
    }
    const std::string_view part =
        text.substr(piece.begin, piece.end - piece.begin);
    for (std::string_view word : ti::SplitGpt2Words(part))
      EncodeWordWithOffsets(text, word, word_id++, &encoding);
  }
  return encoding;
}

void Gpt2BpeTokenizer::PostProcess(Encoding* sequence, int /*index*/,
                                   bool /*pair*/,
                                   bool /*add_special_tokens*/) const {
  ti::TrimByteLevelOffsets(sequence);
}

}  // namespace lmtrain
