#include "text/tokenizers/internal/hf_wordpiece_files.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/tokenizers/internal/file_util.h"
#include "text/tokenizers/internal/hf_config_files.h"
#include "text/tokenizers/internal/vocab_json.h"

namespace lmtrain::tokenizers_internal {
namespace {

using Json = nlohmann::json;

absl::StatusOr<Json> ReadJson(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJsonFile(text, path);
}

// A role in tokenizer_config.json: a string or {"content": ...}.
void ReadRole(const Json& config, const char* key, std::string* out) {
  if (!config.contains(key)) return;
  const Json& value = config[key];
  if (value.is_string()) *out = value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    *out = value["content"].get<std::string>();
  }
}

void ApplyTokenizerConfig(const Json& config, WordPieceFiles* files) {
  BertNormalizerOptions& n = files->normalizer;
  if (config.contains("do_lower_case") && config["do_lower_case"].is_boolean())
    n.lowercase = config["do_lower_case"].get<bool>();
  n.strip_accents = n.lowercase;
  if (config.contains("strip_accents") && config["strip_accents"].is_boolean())
    n.strip_accents = config["strip_accents"].get<bool>();
  if (config.contains("tokenize_chinese_chars") && config["tokenize_chinese_chars"].is_boolean()) {
    n.handle_chinese_chars = config["tokenize_chinese_chars"].get<bool>();
  }
  ReadRole(config, "unk_token", &files->unk_token);
  ReadRole(config, "cls_token", &files->cls_token);
  ReadRole(config, "sep_token", &files->sep_token);
  ReadRole(config, "pad_token", &files->pad_token);
  ReadRole(config, "mask_token", &files->mask_token);
  files->single_before = {{files->cls_token, 0}};
  files->single_after = {{files->sep_token, 0}};
  files->pair_before = {{files->cls_token, 0}};
  files->pair_between = {{files->sep_token, 0}};
  files->pair_after = {{files->sep_token, 1}};
}

absl::Status UnsupportedWordPiece(const std::string& path, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat(path, ": ", what, "; only BERT-style WordPiece tokenizer.json is supported"));
}

bool Flag(const Json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

absl::Status ReadNormalizer(const Json& root, WordPieceFiles* files) {
  const Json& normalizer = root.value("normalizer", Json());
  BertNormalizerOptions& n = files->normalizer;
  if (normalizer.is_null()) {
    n = {false, false, false, false};
    return absl::OkStatus();
  }
  if (normalizer.value("type", "") != "BertNormalizer")
    return UnsupportedWordPiece(files->source, "the normalizer is not BertNormalizer");
  n.clean_text = Flag(normalizer, "clean_text", true);
  n.handle_chinese_chars = Flag(normalizer, "handle_chinese_chars", true);
  n.lowercase = Flag(normalizer, "lowercase", true);
  n.strip_accents = Flag(normalizer, "strip_accents", n.lowercase);
  return absl::OkStatus();
}

// [token, id] of BertProcessing's "cls" / "sep".
std::string ProcessingToken(const Json& processor, const char* key) {
  const Json& pair = processor.value(key, Json());
  return pair.is_array() && !pair.empty() && pair[0].is_string() ? pair[0].get<std::string>()
                                                                 : std::string();
}

// Splits a TemplateProcessing template at its sequences: tokens before A,
// between A and B, after B.
absl::Status SplitTemplate(const Json& items, const std::string& where,
                           std::vector<std::vector<TemplateToken>>* parts) {
  parts->assign(1, {});
  for (const Json& item : items) {
    if (item.contains("Sequence")) {
      parts->emplace_back();
    } else if (item.contains("SpecialToken")) {
      const Json& special = item["SpecialToken"];
      parts->back().push_back({special.value("id", ""), special.value("type_id", 0)});
    } else {
      return absl::InvalidArgumentError(where + ": unknown template item");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadTemplate(const Json& processor, WordPieceFiles* files) {
  std::vector<std::vector<TemplateToken>> single, pair;
  RETURN_IF_ERROR(SplitTemplate(processor.value("single", Json::array()),
                                files->source + ": post_processor.single", &single));
  RETURN_IF_ERROR(SplitTemplate(processor.value("pair", Json::array()),
                                files->source + ": post_processor.pair", &pair));
  if (single.size() != 2 || pair.size() != 3) {
    return UnsupportedWordPiece(files->source,
                                "the template needs $A once (single) and $A, $B (pair)");
  }
  files->single_before = single[0];
  files->single_after = single[1];
  files->pair_before = pair[0];
  files->pair_between = pair[1];
  files->pair_after = pair[2];
  return absl::OkStatus();
}

absl::Status ReadPostProcessor(const Json& root, WordPieceFiles* files) {
  const Json& processor = root.value("post_processor", Json());
  const std::string type = processor.is_null() ? "" : processor.value("type", "");
  if (type == "BertProcessing") {
    files->cls_token = ProcessingToken(processor, "cls");
    files->sep_token = ProcessingToken(processor, "sep");
    files->single_before = {{files->cls_token, 0}};
    files->single_after = {{files->sep_token, 0}};
    files->pair_before = {{files->cls_token, 0}};
    files->pair_between = {{files->sep_token, 0}};
    files->pair_after = {{files->sep_token, 1}};
    return absl::OkStatus();
  }
  if (type == "TemplateProcessing") return ReadTemplate(processor, files);
  if (!processor.is_null())
    return UnsupportedWordPiece(files->source, "post_processor type " + type);
  files->single_before = files->single_after = {};
  files->pair_before = files->pair_between = files->pair_after = {};
  return absl::OkStatus();
}

absl::Status AddToken(const std::string& token, const Json& id, const std::string& where,
                      WordPieceFiles* files) {
  if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxVocabId) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": id must be an integer in [0, ", kMaxVocabId, "]"));
  }
  const size_t index = id.get<size_t>();
  if (index >= files->id_to_token.size()) files->id_to_token.resize(index + 1);
  files->id_to_token[index] = token;
  return absl::OkStatus();
}

absl::Status ReadVocabulary(const Json& root, WordPieceFiles* files) {
  const Json& model = root["model"];
  const Json& vocab = model.value("vocab", Json());
  if (!vocab.is_object() || vocab.empty()) {
    return absl::InvalidArgumentError(files->source + ": model.vocab must be a non-empty object");
  }
  for (const auto& [token, id] : vocab.items()) {
    RETURN_IF_ERROR(
        AddToken(token, id, absl::StrCat(files->source, ": model.vocab[\"", token, "\"]"), files));
  }
  files->unk_token = model.value("unk_token", files->unk_token);
  files->prefix = model.value("continuing_subword_prefix", files->prefix);
  files->max_input_chars_per_word =
      model.value("max_input_chars_per_word", files->max_input_chars_per_word);
  const Json& added = root.value("added_tokens", Json::array());
  for (size_t i = 0; i < added.size(); ++i) {
    const std::string where = absl::StrCat(files->source, ": added_tokens[", i, "]");
    const std::string content = added[i].value("content", "");
    if (content.empty())
      return absl::InvalidArgumentError(where + ": needs a non-empty \"content\"");
    RETURN_IF_ERROR(AddToken(content, added[i].value("id", Json()), where, files));
    files->added_tokens.push_back(content);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WordPieceFiles> ReadVocabTxt(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  WordPieceFiles files;
  files.source = path;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    files.id_to_token.push_back(std::move(line));
    start = end + 1;
  }
  if (files.id_to_token.empty()) return absl::InvalidArgumentError(path + ": empty vocabulary");
  const std::string config = JoinPath(DirName(path), "tokenizer_config.json");
  if (IsRegularFile(config)) {
    ASSIGN_OR_RETURN(Json json, ReadJson(config));
    if (json.is_object()) ApplyTokenizerConfig(json, &files);
  }
  for (const std::string* role : {&files.pad_token, &files.unk_token, &files.cls_token,
                                  &files.sep_token, &files.mask_token}) {
    if (!role->empty()) files.added_tokens.push_back(*role);
  }
  return files;
}

absl::StatusOr<WordPieceFiles> ReadWordPieceTokenizerJson(const std::string& path) {
  ASSIGN_OR_RETURN(Json root, ReadJson(path));
  WordPieceFiles files;
  files.source = path;
  try {
    if (!root.is_object() || !root.contains("model") ||
        root["model"].value("type", "") != "WordPiece") {
      return UnsupportedWordPiece(path, "model.type is not \"WordPiece\"");
    }
    const Json& pre = root.value("pre_tokenizer", Json());
    if (!pre.is_object() || pre.value("type", "") != "BertPreTokenizer")
      return UnsupportedWordPiece(path, "the pre_tokenizer is not BertPreTokenizer");
    RETURN_IF_ERROR(ReadNormalizer(root, &files));
    RETURN_IF_ERROR(ReadPostProcessor(root, &files));
    RETURN_IF_ERROR(ReadVocabulary(root, &files));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": unexpected content: ", e.what()));
  }
  return files;
}

absl::StatusOr<std::string> ReadTokenizerJsonModelType(const std::string& path) {
  ASSIGN_OR_RETURN(Json root, ReadJson(path));
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object() ||
      !root["model"].value("type", Json()).is_string()) {
    return absl::InvalidArgumentError(path + ": no \"model\" object with a \"type\"");
  }
  return root["model"]["type"].get<std::string>();
}

}  // namespace lmtrain::tokenizers_internal
