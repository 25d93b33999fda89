#include "text/tokenizers/internal/hf_config_files.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/file_util.h"

namespace lmtrain::tokenizers_internal {
namespace {

absl::StatusOr<std::string> TokenContent(const nlohmann::json& value,
                                         const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") &&
      value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": expected a string or an object with a \"content\" string"));
}

absl::Status ReadRole(const nlohmann::json& map, const char* key,
                      const std::string& file, std::string* out) {
  if (!map.contains(key) || map[key].is_null()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*out, TokenContent(map[key], absl::StrCat(file, ": ", key)));
  return absl::OkStatus();
}

nlohmann::ordered_json RolesJson(const SpecialTokenNames& names) {
  nlohmann::ordered_json roles = nlohmann::ordered_json::object();
  const std::pair<const char*, const std::string*> fields[] = {
      {"bos_token", &names.bos},
      {"eos_token", &names.eos},
      {"unk_token", &names.unk},
      {"pad_token", &names.pad}};
  for (const auto& [key, value] : fields) {
    if (!value->empty()) roles[key] = *value;
  }
  if (!names.additional.empty())
    roles["additional_special_tokens"] = names.additional;
  return roles;
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJsonFile(const std::string& text,
                                             const std::string& file_name) {
  // One set of keys per open object; a repeated key would otherwise silently
  // overwrite.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto callback = [&](int, nlohmann::json::parse_event_t event,
                      nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end && !open_objects.empty())
      open_objects.pop_back();
    if (event == Event::key && !open_objects.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second &&
        duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": not valid JSON: ", e.what()));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": key \"", duplicate, "\" appears twice in one object"));
  }
  return json;
}

absl::StatusOr<SpecialTokenNames> ReadSpecialTokensMap(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ASSIGN_OR_RETURN(nlohmann::json map, ParseJsonFile(text, path));
  if (!map.is_object())
    return absl::InvalidArgumentError(path + ": expected a JSON object");
  SpecialTokenNames names;
  RETURN_IF_ERROR(ReadRole(map, "bos_token", path, &names.bos));
  RETURN_IF_ERROR(ReadRole(map, "eos_token", path, &names.eos));
  RETURN_IF_ERROR(ReadRole(map, "unk_token", path, &names.unk));
  RETURN_IF_ERROR(ReadRole(map, "pad_token", path, &names.pad));
  if (map.contains("additional_special_tokens")) {
    const nlohmann::json& list = map["additional_special_tokens"];
    if (!list.is_array()) {
      return absl::InvalidArgumentError(
          path + ": additional_special_tokens must be a list");
    }
    for (const nlohmann::json& item : list) {
      ASSIGN_OR_RETURN(
          std::string token,
          TokenContent(item, path + ": additional_special_tokens"));
      names.additional.push_back(std::move(token));
    }
  }
  return names;
}

absl::Status WriteHfTokenizerConfig(const std::string& dir,
                                    const SpecialTokenNames& names,
                                    const std::string& tokenizer_class,
                                    const nlohmann::ordered_json& extra) {
  const nlohmann::ordered_json roles = RolesJson(names);
  nlohmann::ordered_json config = {{"tokenizer_class", tokenizer_class}};
  config.update(roles);
  config.update(extra);
  const auto replace = nlohmann::json::error_handler_t::replace;
  RETURN_IF_ERROR(WriteFile(JoinPath(dir, "special_tokens_map.json"),
                            roles.dump(2, ' ', false, replace) + "\n"));
  return WriteFile(JoinPath(dir, "tokenizer_config.json"),
                   config.dump(2, ' ', false, replace) + "\n");
}

}  // namespace lmtrain::tokenizers_internal
