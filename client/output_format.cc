#include "client/output_format.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace lmtrain {
namespace {

// YAML 1.1/1.2 plain scalars that a reader would not take as a string.
bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  const std::string lower = absl::AsciiStrToLower(s);
  for (const char* word : {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".nan",
                           ".inf", "-.inf", "+.inf"}) {
    if (lower == word) return true;
  }
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0') return true;  // A number.
  // YAML 1.1 readers (PyYAML) turn "2026-01-02..." into a date.
  const bool date = s.size() >= 10 && absl::ascii_isdigit(s[0]) && absl::ascii_isdigit(s[3]) &&
                    s[4] == '-' && s[7] == '-';
  return date || absl::StartsWith(s, "0x") || absl::StartsWith(s, "0o");
}

void Emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) out << YAML::Flow;  // "{}" on the key's line.
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key;
        if (NeedsQuotes(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        Emit(out, value);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      if (v.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : v) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case nlohmann::json::value_t::boolean:
      out << (v.get<bool>() ? "true" : "false");
      break;
    case nlohmann::json::value_t::number_integer:
      out << v.get<int64_t>();
      break;
    case nlohmann::json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      break;
    case nlohmann::json::value_t::number_float: {
      const double d = v.get<double>();
      if (std::isnan(d)) {
        out << ".nan";
      } else if (std::isinf(d)) {
        out << (d > 0 ? ".inf" : "-.inf");
      } else {
        out << v.dump();  // nlohmann's shortest round-trip form.
      }
      break;
    }
    default:
      out << YAML::Null;
  }
}

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name == "text") return OutputFormat::kText;
  if (name == "json") return OutputFormat::kJson;
  if (name == "yaml") return OutputFormat::kYaml;
  return absl::InvalidArgumentError("-o must be text, json or yaml (got '" + name + "')");
}

std::string JsonToYaml(const nlohmann::json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string RenderDocument(const nlohmann::json& value, OutputFormat format) {
  if (format == OutputFormat::kYaml) return JsonToYaml(value);
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderStreamItem(const nlohmann::json& value, OutputFormat format) {
  if (format == OutputFormat::kYaml) return "---\n" + JsonToYaml(value);
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace lmtrain
