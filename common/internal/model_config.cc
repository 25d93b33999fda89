#include "common/internal/model_config.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace lmtrain::internal {
namespace {

enum class ValueKind { kInt, kNumber, kBool, kString };

// One key of an HF config class, with the type and range lm-train accepts for it.
struct ConfigKey {
  std::string_view key;
  ValueKind kind;
  Range range = Range::Any();
  bool nullable = false;
};

// transformers.GPT2Config's fields (those that shape or initialise the model).
const std::vector<ConfigKey>& Gpt2Keys() {
  static const auto* keys = new std::vector<ConfigKey>{
      {"model_type", ValueKind::kString},
      {"vocab_size", ValueKind::kInt, Range::Above(0)},
      {"n_positions", ValueKind::kInt, Range::Above(0)},
      {"n_embd", ValueKind::kInt, Range::Above(0)},
      {"n_layer", ValueKind::kInt, Range::Above(0)},
      {"n_head", ValueKind::kInt, Range::Above(0)},
      {"n_inner", ValueKind::kInt, Range::Above(0), /*nullable=*/true},
      {"activation_function", ValueKind::kString},
      {"resid_pdrop", ValueKind::kNumber, Range::HalfOpen(0, 1)},
      {"embd_pdrop", ValueKind::kNumber, Range::HalfOpen(0, 1)},
      {"attn_pdrop", ValueKind::kNumber, Range::HalfOpen(0, 1)},
      {"layer_norm_epsilon", ValueKind::kNumber, Range::Above(0)},
      {"initializer_range", ValueKind::kNumber, Range::AtLeast(0)},
      {"bos_token_id", ValueKind::kInt, Range::AtLeast(0), /*nullable=*/true},
      {"eos_token_id", ValueKind::kInt, Range::AtLeast(0), /*nullable=*/true},
      {"scale_attn_weights", ValueKind::kBool},
      {"use_cache", ValueKind::kBool},
      {"tie_word_embeddings", ValueKind::kBool},
  };
  return *keys;
}

int64_t IntOr(const nlohmann::json& config, const char* key, int64_t fallback) {
  auto it = config.find(key);
  return it != config.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// Keys every encoder family's config class accepts (PretrainedConfig's and the heads').
void AddCommonEncoderKeys(std::vector<ConfigKey>& keys) {
  const std::vector<ConfigKey> common = {
      {"model_type", ValueKind::kString},
      {"vocab_size", ValueKind::kInt, Range::Above(0)},
      {"max_position_embeddings", ValueKind::kInt, Range::Above(0)},
      {"initializer_range", ValueKind::kNumber, Range::AtLeast(0)},
      {"pad_token_id", ValueKind::kInt, Range::AtLeast(0), /*nullable=*/true},
      {"bos_token_id", ValueKind::kInt, Range::AtLeast(0), /*nullable=*/true},
      {"eos_token_id", ValueKind::kInt, Range::AtLeast(0), /*nullable=*/true},
      {"num_labels", ValueKind::kInt, Range::Above(0)},
      {"problem_type", ValueKind::kString, Range::Any(), /*nullable=*/true},
      {"tie_word_embeddings", ValueKind::kBool},
  };
  keys.insert(keys.end(), common.begin(), common.end());
}

// BertConfig's shape keys, shared by RoBERTa, ELECTRA and ALBERT.
void AddBertShapeKeys(std::vector<ConfigKey>& keys) {
  const std::vector<ConfigKey> shape = {
      {"hidden_size", ValueKind::kInt, Range::Above(0)},
      {"num_hidden_layers", ValueKind::kInt, Range::Above(0)},
      {"num_attention_heads", ValueKind::kInt, Range::Above(0)},
      {"intermediate_size", ValueKind::kInt, Range::Above(0)},
      {"hidden_act", ValueKind::kString},
      {"hidden_dropout_prob", ValueKind::kNumber, Range::HalfOpen(0, 1)},
      {"attention_probs_dropout_prob", ValueKind::kNumber, Range::HalfOpen(0, 1)},
      {"type_vocab_size", ValueKind::kInt, Range::Above(0)},
      {"layer_norm_eps", ValueKind::kNumber, Range::Above(0)},
      {"position_embedding_type", ValueKind::kString},
      {"classifier_dropout", ValueKind::kNumber, Range::HalfOpen(0, 1), /*nullable=*/true},
  };
  keys.insert(keys.end(), shape.begin(), shape.end());
}

// The schema of a supported encoder model_type (bert, roberta, electra, albert, distilbert).
std::vector<ConfigKey> EncoderKeys(std::string_view model_type) {
  std::vector<ConfigKey> keys;
  AddCommonEncoderKeys(keys);
  if (model_type == "distilbert") {
    const std::vector<ConfigKey> distil = {
        {"dim", ValueKind::kInt, Range::Above(0)},
        {"n_layers", ValueKind::kInt, Range::Above(0)},
        {"n_heads", ValueKind::kInt, Range::Above(0)},
        {"hidden_dim", ValueKind::kInt, Range::Above(0)},
        {"activation", ValueKind::kString},
        {"dropout", ValueKind::kNumber, Range::HalfOpen(0, 1)},
        {"attention_dropout", ValueKind::kNumber, Range::HalfOpen(0, 1)},
        {"qa_dropout", ValueKind::kNumber, Range::HalfOpen(0, 1)},
        {"seq_classif_dropout", ValueKind::kNumber, Range::HalfOpen(0, 1)},
        {"sinusoidal_pos_embds", ValueKind::kBool},
    };
    keys.insert(keys.end(), distil.begin(), distil.end());
    return keys;
  }
  AddBertShapeKeys(keys);
  if (model_type == "albert" || model_type == "electra") {
    keys.push_back({"embedding_size", ValueKind::kInt, Range::Above(0)});
  }
  if (model_type == "albert") {
    keys.push_back({"num_hidden_groups", ValueKind::kInt, Range::Above(0)});
    keys.push_back({"inner_group_num", ValueKind::kInt, Range::Above(0)});
    keys.push_back({"classifier_dropout_prob", ValueKind::kNumber, Range::HalfOpen(0, 1)});
  }
  return keys;
}

// Cross-key rule of the BERT-style configs: heads divide the hidden size.
// model_type is the one ModelType read: the config's own entry may be another value when the
// mapping repeats the key.
void CheckEncoder(YamlReader& reader, const nlohmann::json& config, std::string_view model_type,
                  const std::string& path) {
  const bool distil = model_type == "distilbert";
  const char* size_key = distil ? "dim" : "hidden_size";
  const char* heads_key = distil ? "n_heads" : "num_attention_heads";
  const int64_t size = IntOr(config, size_key, 768);
  const int64_t heads = IntOr(config, heads_key, 12);
  if (size > 0 && heads > 0 && size % heads != 0) {
    std::string key = JoinPath(path, config.contains(size_key) ? size_key : heads_key);
    reader.ReportAt(key,
                    absl::StrCat(JoinPath(path, size_key), " (", size, ") must be divisible by ",
                                 JoinPath(path, heads_key), " (", heads, ")"));
  }
}

constexpr int64_t kGpt2NPositions = 1024;
constexpr int64_t kEncoderNPositions = 512;
constexpr int64_t kGpt2NEmbd = 768;
constexpr int64_t kGpt2NHead = 12;

bool IsSupported(std::string_view model_type) {
  for (std::string_view t : kSupportedModelTypes) {
    if (t == model_type) return true;
  }
  return false;
}

std::string SupportedList() { return JoinNames(kSupportedModelTypes); }

// A scalar's JSON value by how it looks (see ReadModelConfig).
nlohmann::json ScalarToJson(const YamlNode& node) {
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") return text;  // quoted or explicitly tagged: keep the text
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (std::optional<bool> b = ParseYamlBool(text)) return *b;
  int64_t i = 0;
  if (text.find_first_of(".eE") == std::string::npos && absl::SimpleAtoi(text, &i)) return i;
  double d = 0;
  if (absl::SimpleAtod(text, &d) && text.find_first_of("0123456789") != std::string::npos) {
    return d;
  }
  return text;
}

// A model config is a few dozen values: one that expands to more (YAML aliases, `&a` / `*a`,
// multiply a few lines into billions of values) or nests deeper is refused before it can exhaust
// memory or the stack.
constexpr int64_t kMaxConfigValues = 100000;
constexpr int kMaxConfigDepth = 32;

// The node as JSON; false when it has more than *budget values or kMaxConfigDepth levels.
bool NodeToJson(const YamlNode& node, int depth, int64_t* budget, nlohmann::json* out) {
  if (--*budget < 0 || depth > kMaxConfigDepth) return false;
  if (node.IsSequence()) {
    *out = nlohmann::json::array();
    for (const YamlNode item : node.Items()) {
      nlohmann::json value;
      if (!NodeToJson(item, depth + 1, budget, &value)) return false;
      out->push_back(std::move(value));
    }
    return true;
  }
  if (node.IsMap()) {
    *out = nlohmann::json::object();
    for (const auto& [key, item] : node.Entries()) {
      nlohmann::json value;
      if (!NodeToJson(item, depth + 1, budget, &value)) return false;
      (*out)[key.Scalar()] = std::move(value);
    }
    return true;
  }
  *out = ScalarToJson(node);
  return true;
}

// Type- and range-checks one known key's value; reports through `reader`.
void CheckValue(YamlReader& reader, const ConfigKey& key, const YamlNode& node,
                const std::string& path) {
  if (key.nullable && node.IsNull()) return;
  switch (key.kind) {
    case ValueKind::kInt:
      reader.ReadInt(node, path, key.range);
      break;
    case ValueKind::kNumber:
      reader.ReadDouble(node, path, key.range);
      break;
    case ValueKind::kBool:
      reader.ReadBool(node, path);
      break;
    case ValueKind::kString:
      if (node.IsScalar()) break;
      reader.ReportAt(path, absl::StrCat(path, " must be a string (got ",
                                         node.IsNull() ? "null" : "a collection", ")"));
      break;
  }
}

// Cross-key rules of GPT2Config, checked with HF defaults for absent keys.
void CheckGpt2(YamlReader& reader, const nlohmann::json& config, const std::string& path) {
  int64_t n_embd = IntOr(config, "n_embd", kGpt2NEmbd);
  int64_t n_head = IntOr(config, "n_head", kGpt2NHead);
  if (n_embd > 0 && n_head > 0 && n_embd % n_head != 0) {
    std::string key = JoinPath(path, config.contains("n_embd") ? "n_embd" : "n_head");
    reader.ReportAt(key,
                    absl::StrCat(JoinPath(path, "n_embd"), " (", n_embd, ") must be divisible by ",
                                 JoinPath(path, "n_head"), " (", n_head, ")"));
  }
}

// The model_type scalar of the mapping, or "" after reporting it missing or invalid.
std::string ModelType(YamlReader& reader, const YamlNode& node, const std::string& path) {
  std::string key = JoinPath(path, "model_type");
  for (const auto& entry : node.Entries()) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != "model_type") continue;
    std::optional<std::string> type = reader.ReadString(entry.second, key);
    if (!type) return "";
    if (!IsSupported(*type)) {
      reader.Report(NodeLine(entry.first),
                    absl::StrCat(key, " '", *type,
                                 "' is not supported yet (supported: ", SupportedList(), ")"));
      return "";
    }
    return *type;
  }
  reader.ReportAt(path, absl::StrCat(key, " is required (supported: ", SupportedList(), ")"));
  return "";
}

}  // namespace

nlohmann::json ReadModelConfig(YamlReader& reader, const YamlNode& node,
                               const std::string& path) {
  if (!node.IsMap() && !node.IsNull()) {
    reader.ReportAt(path, absl::StrCat(path, " must be a mapping of HF config keys (got ",
                                       DescribeNode(node), ")"));
    return nullptr;
  }
  nlohmann::json config = nlohmann::json::object();
  int64_t budget = kMaxConfigValues;
  if (!node.IsNull() && !NodeToJson(node, 0, &budget, &config)) {
    reader.ReportAt(path, absl::StrCat(path, " has more than ", kMaxConfigValues, " values or ",
                                       kMaxConfigDepth, " levels of nesting (YAML aliases?)"));
    return nullptr;
  }
  std::string model_type = ModelType(reader, node, path);
  if (model_type.empty()) return config;  // no schema to check the keys against
  const bool gpt2 = model_type == "gpt2";
  const std::vector<ConfigKey> schema = gpt2 ? Gpt2Keys() : EncoderKeys(model_type);
  std::vector<std::string_view> known;
  for (const ConfigKey& k : schema) known.push_back(k.key);
  reader.VisitMapping(
      node, path, known,
      [&](const std::string& key, const YamlNode& value, const std::string& child) {
        for (const ConfigKey& k : schema) {
          if (k.key == key) CheckValue(reader, k, value, child);
        }
      });
  if (gpt2) {
    CheckGpt2(reader, config, path);
  } else {
    CheckEncoder(reader, config, model_type, path);
  }
  return config;
}

std::optional<int64_t> ModelNPositions(const nlohmann::json& config) {
  if (!config.is_object()) return std::nullopt;
  for (const char* key : {"n_positions", "max_position_embeddings"}) {
    auto it = config.find(key);
    if (it != config.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  auto type = config.find("model_type");
  if (type != config.end() && *type == "gpt2") return kGpt2NPositions;
  if (type != config.end() && type->is_string()) return kEncoderNPositions;  // BERT's 512
  return std::nullopt;
}

std::optional<int64_t> ReadPretrainedNPositions(YamlReader& reader, const std::string& dir,
                                                const std::string& path) {
  std::string file = dir + "/config.json";
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    reader.ReportAt(path, absl::StrCat(path, ": ", file, " is not a JSON object"));
    return std::nullopt;
  }
  auto type = config.find("model_type");
  if (type != config.end() && type->is_string() && !IsSupported(type->get<std::string>())) {
    reader.ReportAt(path,
                    absl::StrCat(path, ": model_type '", type->get<std::string>(), "' in ", file,
                                 " is not supported yet (supported: ", SupportedList(), ")"));
    return std::nullopt;
  }
  return ModelNPositions(config);
}

void WriteJsonAsYaml(YamlOut& out, const nlohmann::json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      WriteJsonAsYaml(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : value) WriteJsonAsYaml(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    out << YAML::DoubleQuoted << value.get<std::string>();
  } else if (value.is_boolean()) {
    out << (value.get<bool>() ? "true" : "false");
  } else if (value.is_number_unsigned()) {
    out << value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    out << static_cast<long long>(value.get<int64_t>());
  } else if (value.is_number_float()) {
    out << FormatDouble(value.get<double>());
  } else {
    out << YAML::Null;
  }
}

}  // namespace lmtrain::internal
