#include "text/tokenizers/internal/hf_tokenizer_json.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/bpe_merges.h"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/hf_config_files.h"
#include "text/tokenizers/internal/vocab_json.h"

namespace lmtrain::tokenizers_internal {
namespace {

using Json = nlohmann::json;

absl::Status Unsupported(const std::string& path, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(
      path, ": ", what,
      "; supported tokenizer.json models: byte-level BPE (GPT-2 style) and "
      "WordPiece (BERT style)"));
}

// `object[key]`, or null when absent (const operator[] on a missing key is
// undefined behaviour in nlohmann::json).
const Json& Field(const Json& object, const char* key) {
  static const Json* const kNull = new Json();
  if (!object.is_object()) return *kNull;
  auto it = object.find(key);
  return it == object.end() ? *kNull : *it;
}

bool IsSet(const Json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return false;
  const Json& value = object[key];
  return !(value == false || value == "" || value == 0);
}

bool HasPlainByteLevel(const Json& pre) {
  if (pre.is_null() || !pre.is_object()) return false;
  if (pre.value("type", "") == "Sequence" && pre.contains("pretokenizers")) {
    for (const Json& item : pre["pretokenizers"]) {
      if (HasPlainByteLevel(item)) return true;
    }
    return false;
  }
  return pre.value("type", "") == "ByteLevel" &&
         !IsSet(pre, "add_prefix_space") && pre.value("use_regex", true);
}

absl::Status CheckSupported(const Json& root, const std::string& path) {
  if (!root.is_object() || !root.contains("model") ||
      !root["model"].is_object()) {
    return absl::InvalidArgumentError(path + ": no \"model\" object");
  }
  const Json& model = root["model"];
  if (model.value("type", "") != "BPE")
    return Unsupported(path, "model.type is not \"BPE\"");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix",
                          "dropout", "ignore_merges", "byte_fallback"}) {
    if (IsSet(model, key))
      return Unsupported(path, absl::StrCat("model.", key, " is set"));
  }
  if (IsSet(root, "normalizer"))
    return Unsupported(path, "a normalizer is set");
  if (!root.contains("pre_tokenizer") ||
      !HasPlainByteLevel(root["pre_tokenizer"])) {
    return Unsupported(
        path, "the pre_tokenizer is not ByteLevel without add_prefix_space");
  }
  return absl::OkStatus();
}

absl::Status AddToken(const std::string& token, const Json& id,
                      const std::string& where,
                      std::vector<std::string>* id_to_token) {
  if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
      id.get<int64_t>() > kMaxVocabId) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": id must be an integer in [0, ", kMaxVocabId, "]"));
  }
  const size_t index = id.get<size_t>();
  if (index >= id_to_token->size()) id_to_token->resize(index + 1);
  std::string& slot = (*id_to_token)[index];
  if (!slot.empty() && slot != token) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": id ", index,
                                                   " is given to both \"", slot,
                                                   "\" and \"", token, "\""));
  }
  slot = token;
  return absl::OkStatus();
}

absl::Status ReadVocab(const Json& root, const std::string& path,
                       ByteLevelBpeFiles* out) {
  const Json& vocab = Field(root["model"], "vocab");
  if (!vocab.is_object() || vocab.empty()) {
    return absl::InvalidArgumentError(
        path + ": model.vocab must be a non-empty object");
  }
  for (const auto& [token, id] : vocab.items()) {
    RETURN_IF_ERROR(AddToken(
        token, id, absl::StrCat(path, ": model.vocab[\"", token, "\"]"),
        &out->id_to_token));
  }
  if (!root.contains("added_tokens") || root["added_tokens"].is_null())
    return absl::OkStatus();
  const Json& added = root["added_tokens"];
  if (!added.is_array())
    return absl::InvalidArgumentError(path + ": added_tokens must be a list");
  for (size_t i = 0; i < added.size(); ++i) {
    const std::string where = absl::StrCat(path, ": added_tokens[", i, "]");
    if (!added[i].is_object() || !added[i].contains("content") ||
        !added[i]["content"].is_string() ||
        added[i]["content"].get<std::string>().empty()) {
      return absl::InvalidArgumentError(
          where + ": needs a non-empty \"content\" string");
    }
    const std::string content = added[i]["content"].get<std::string>();
    RETURN_IF_ERROR(AddToken(content, added[i].value("id", Json()), where,
                             &out->id_to_token));
    if (added[i].value("special", false))
      out->special_tokens.push_back(content);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::string, std::string>> MergePair(
    const Json& item, const std::string& where) {
  if (item.is_string()) {
    std::vector<std::string> parts =
        absl::StrSplit(item.get<std::string>(), ' ');
    if (parts.size() == 2 && !parts[0].empty() && !parts[1].empty()) {
      return std::make_pair(parts[0], parts[1]);
    }
  } else if (item.is_array() && item.size() == 2 && item[0].is_string() &&
             item[1].is_string()) {
    return std::make_pair(item[0].get<std::string>(),
                          item[1].get<std::string>());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": expected \"left right\" or [\"left\", \"right\"], got ",
      item.dump()));
}

absl::Status ReadMerges(const Json& root, const std::string& path,
                        ByteLevelBpeFiles* out) {
  const Json& merges = Field(root["model"], "merges");
  if (merges.is_null())
    return absl::OkStatus();  // No merges: every byte is a token.
  if (!merges.is_array())
    return absl::InvalidArgumentError(path + ": model.merges must be a list");
  TokenIdMap vocab;
  for (size_t id = 0; id < out->id_to_token.size(); ++id) {
    if (!out->id_to_token[id].empty()) vocab.emplace(out->id_to_token[id], id);
  }
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string where = absl::StrCat(path, ": model.merges[", i, "]");
    ASSIGN_OR_RETURN(auto pair, MergePair(merges[i], where));
    ASSIGN_OR_RETURN(BpeMerge merge,
                     ResolveMerge(pair.first, pair.second, vocab, where));
    out->merges.push_back(merge);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ByteLevelBpeFiles> ReadByteLevelBpeTokenizerJson(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ASSIGN_OR_RETURN(Json root, ParseJsonFile(text, path));
  // nlohmann throws type_error for a field of the wrong type (e.g. "special":
  // "yes").
  try {
    RETURN_IF_ERROR(CheckSupported(root, path));
    ByteLevelBpeFiles files;
    RETURN_IF_ERROR(ReadVocab(root, path, &files));
    RETURN_IF_ERROR(ReadMerges(root, path, &files));
    return files;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": unexpected content: ", e.what()));
  }
}

}  // namespace lmtrain::tokenizers_internal
