#include "worker/models/encoder_config.h"

#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "worker/models/activation_name.h"

namespace lmtrain {
namespace {

using C = EncoderConfig;
using Member = std::variant<int64_t C::*, double C::*, bool C::*, std::string C::*,
                            std::optional<double> C::*>;

struct Field {
  const char* key;
  Member member;
};

struct Family {
  EncoderFamily family;
  const char* model_type;
  std::vector<Field> fields;  // Read, then written back under these names.
};

// BERT's keys; RoBERTa and ELECTRA reuse them (ELECTRA adds embedding_size).
std::vector<Field> BertFields() {
  return {{"vocab_size", &C::vocab_size},
          {"hidden_size", &C::hidden_size},
          {"num_hidden_layers", &C::num_hidden_layers},
          {"num_attention_heads", &C::num_attention_heads},
          {"intermediate_size", &C::intermediate_size},
          {"hidden_act", &C::hidden_act},
          {"hidden_dropout_prob", &C::hidden_dropout_prob},
          {"attention_probs_dropout_prob", &C::attention_probs_dropout_prob},
          {"max_position_embeddings", &C::max_position_embeddings},
          {"type_vocab_size", &C::type_vocab_size},
          {"initializer_range", &C::initializer_range},
          {"layer_norm_eps", &C::layer_norm_eps},
          {"pad_token_id", &C::pad_token_id},
          {"classifier_dropout", &C::classifier_dropout}};
}

std::vector<Field> WithEmbeddingSize(std::vector<Field> fields) {
  fields.push_back({"embedding_size", &C::embedding_size});
  return fields;
}

std::vector<Field> AlbertFields() {
  std::vector<Field> fields = BertFields();
  fields.back() = {"classifier_dropout_prob", &C::classifier_dropout};  // AlbertConfig's name.
  fields.push_back({"embedding_size", &C::embedding_size});
  fields.push_back({"num_hidden_groups", &C::num_hidden_groups});
  fields.push_back({"inner_group_num", &C::inner_group_num});
  return fields;
}

std::vector<Field> DistilBertFields() {
  return {{"vocab_size", &C::vocab_size},
          {"dim", &C::hidden_size},
          {"n_layers", &C::num_hidden_layers},
          {"n_heads", &C::num_attention_heads},
          {"hidden_dim", &C::intermediate_size},
          {"activation", &C::hidden_act},
          {"dropout", &C::hidden_dropout_prob},
          {"attention_dropout", &C::attention_probs_dropout_prob},
          {"max_position_embeddings", &C::max_position_embeddings},
          {"initializer_range", &C::initializer_range},
          {"pad_token_id", &C::pad_token_id},
          {"seq_classif_dropout", &C::classifier_dropout},
          {"qa_dropout", &C::qa_dropout}};
}

const std::vector<Family>& Families() {
  static const auto* families = new std::vector<Family>{
      {EncoderFamily::kBert, "bert", BertFields()},
      {EncoderFamily::kRoberta, "roberta", BertFields()},
      {EncoderFamily::kDistilBert, "distilbert", DistilBertFields()},
      {EncoderFamily::kAlbert, "albert", AlbertFields()},
      {EncoderFamily::kElectra, "electra", WithEmbeddingSize(BertFields())},
  };
  return *families;
}

// HF's per-class defaults where they differ from BERT's.
EncoderConfig Defaults(EncoderFamily family) {
  EncoderConfig config;
  config.family = family;
  if (family == EncoderFamily::kRoberta) {
    config.vocab_size = 50265;
    config.pad_token_id = 1;
  }
  if (family == EncoderFamily::kAlbert) {
    config.vocab_size = 30000;
    config.embedding_size = 128;
    config.hidden_size = 4096;
    config.num_attention_heads = 64;
    config.intermediate_size = 16384;
    config.hidden_act = "gelu_new";
    config.hidden_dropout_prob = 0;
    config.attention_probs_dropout_prob = 0;
    config.classifier_dropout = 0.1;
  }
  if (family == EncoderFamily::kElectra) {
    config.embedding_size = 128;
    config.hidden_size = 256;
    config.num_attention_heads = 4;
    config.intermediate_size = 1024;
  }
  if (family == EncoderFamily::kDistilBert) {
    config.num_hidden_layers = 6;
    config.intermediate_size = 3072;
    config.classifier_dropout = 0.2;
    config.qa_dropout = 0.1;
  }
  return config;
}

absl::Status TypeError(const char* key, absl::string_view expected, const nlohmann::json& got) {
  return absl::InvalidArgumentError(
      absl::StrCat(key, " must be ", expected, " (got ", got.dump(), ")"));
}

absl::Status ReadField(const Field& field, const nlohmann::json& value, C& config) {
  struct Reader {
    const Field& field;
    const nlohmann::json& value;
    C& config;
    absl::Status operator()(int64_t C::*m) const {
      if (!value.is_number_integer()) return TypeError(field.key, "an integer", value);
      config.*m = value.get<int64_t>();
      return absl::OkStatus();
    }
    absl::Status operator()(double C::*m) const {
      if (!value.is_number()) return TypeError(field.key, "a number", value);
      config.*m = value.get<double>();
      return absl::OkStatus();
    }
    absl::Status operator()(bool C::*m) const {
      if (!value.is_boolean()) return TypeError(field.key, "true or false", value);
      config.*m = value.get<bool>();
      return absl::OkStatus();
    }
    absl::Status operator()(std::string C::*m) const {
      if (!value.is_string()) return TypeError(field.key, "a string", value);
      config.*m = value.get<std::string>();
      return absl::OkStatus();
    }
    absl::Status operator()(std::optional<double> C::*m) const {
      if (value.is_null()) {
        (config.*m).reset();
        return absl::OkStatus();
      }
      if (!value.is_number()) return TypeError(field.key, "a number or null", value);
      config.*m = value.get<double>();
      return absl::OkStatus();
    }
  };
  return std::visit(Reader{field, value, config}, field.member);
}

nlohmann::json WriteField(const Field& field, const C& config) {
  return std::visit(
      [&](auto member) -> nlohmann::json {
        const auto& value = config.*member;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::optional<double>>) {
          return value.has_value() ? nlohmann::json(*value) : nlohmann::json(nullptr);
        } else {
          return value;
        }
      },
      field.member);
}

absl::Status Positive(const char* key, int64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(key, " must be > 0 (got ", value, ")"));
}

absl::Status Validate(const C& c) {
  RETURN_IF_ERROR(Positive("vocab_size", c.vocab_size));
  RETURN_IF_ERROR(Positive("hidden_size", c.hidden_size));
  RETURN_IF_ERROR(Positive("embedding_size", c.embedding_size));
  RETURN_IF_ERROR(Positive("num_hidden_layers", c.num_hidden_layers));
  RETURN_IF_ERROR(Positive("num_attention_heads", c.num_attention_heads));
  RETURN_IF_ERROR(Positive("intermediate_size", c.intermediate_size));
  RETURN_IF_ERROR(Positive("max_position_embeddings", c.max_position_embeddings));
  RETURN_IF_ERROR(Positive("num_hidden_groups", c.num_hidden_groups));
  RETURN_IF_ERROR(Positive("inner_group_num", c.inner_group_num));
  RETURN_IF_ERROR(Positive("num_labels (len(id2label))", c.num_labels));
  if (c.hidden_size % c.num_attention_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("hidden_size (", c.hidden_size,
                                                   ") must be divisible by num_attention_heads (",
                                                   c.num_attention_heads, ")"));
  }
  if (c.num_hidden_layers % c.num_hidden_groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_hidden_layers (", c.num_hidden_layers,
                                                   ") must be divisible by num_hidden_groups (",
                                                   c.num_hidden_groups, ")"));
  }
  if (c.type_vocab_size < 0) return absl::InvalidArgumentError("type_vocab_size must be >= 0");
  if (c.pad_token_id < 0 || c.pad_token_id >= c.vocab_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad_token_id (", c.pad_token_id, ") must be in [0, vocab_size)"));
  }
  if (!(c.layer_norm_eps > 0)) return absl::InvalidArgumentError("layer_norm_eps must be > 0");
  return ParseActivation(c.hidden_act).status();
}

absl::Status ReadGeneric(const nlohmann::json& json, C& config) {
  if (auto it = json.find("tie_word_embeddings"); it != json.end()) {
    if (!it->is_boolean()) return TypeError("tie_word_embeddings", "true or false", *it);
    config.tie_word_embeddings = it->get<bool>();
  }
  if (auto it = json.find("id2label"); it != json.end()) {
    if (!it->is_object()) return TypeError("id2label", "an object", *it);
    config.num_labels = static_cast<int64_t>(it->size());
  } else if (auto n = json.find("num_labels"); n != json.end()) {
    if (!n->is_number_integer()) return TypeError("num_labels", "an integer", *n);
    config.num_labels = n->get<int64_t>();
  }
  if (auto it = json.find("position_embedding_type"); it != json.end() && *it != "absolute") {
    return TypeError("position_embedding_type",
                     "\"absolute\" (relative positions are not "
                     "implemented)",
                     *it);
  }
  if (auto it = json.find("sinusoidal_pos_embds"); it != json.end() && *it != false) {
    return TypeError("sinusoidal_pos_embds", "false (fixed sinusoidal positions are not implemented)",
                     *it);
  }
  if (auto it = json.find("problem_type"); it != json.end() && !it->is_null()) {
    const std::string value = it->is_string() ? it->get<std::string>() : "";
    if (value != "regression" && value != "single_label_classification" &&
        value != "multi_label_classification") {
      return TypeError("problem_type",
                       "null, \"regression\", \"single_label_classification\" or "
                       "\"multi_label_classification\"",
                       *it);
    }
    config.problem_type = value;
  }
  return absl::OkStatus();
}

const Family& FamilyOf(EncoderFamily family) {
  for (const Family& f : Families()) {
    if (f.family == family) return f;
  }
  return Families().front();
}

}  // namespace

std::string EncoderConfig::ModelType() const { return FamilyOf(family).model_type; }
std::string EncoderConfig::BasePrefix() const { return ModelType(); }

absl::StatusOr<EncoderConfig> EncoderConfig::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return absl::InvalidArgumentError("model config must be a JSON object");
  auto type = json.find("model_type");
  if (type == json.end() || !type->is_string()) {
    return absl::InvalidArgumentError("model config needs a \"model_type\" string");
  }
  for (const Family& family : Families()) {
    if (type->get_ref<const std::string&>() != family.model_type) continue;
    EncoderConfig config = Defaults(family.family);
    for (const Field& field : family.fields) {
      if (auto it = json.find(field.key); it != json.end()) {
        RETURN_IF_ERROR(ReadField(field, *it, config));
      }
    }
    const bool factorised =
        family.family == EncoderFamily::kAlbert || family.family == EncoderFamily::kElectra;
    if (!factorised) config.embedding_size = config.hidden_size;
    RETURN_IF_ERROR(ReadGeneric(json, config));
    RETURN_IF_ERROR(Validate(config));
    config.source = json;
    return config;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("model_type '", type->get<std::string>(),
                   "' is not an encoder (supported: bert, roberta, distilbert, albert, electra)"));
}

nlohmann::json EncoderConfig::ToJson(const std::string& architecture) const {
  nlohmann::json json = source;
  json.erase("transformers_version");
  json.erase("torch_dtype");  // SavePretrained writes the live dtype.
  const Family& f = FamilyOf(family);
  for (const Field& field : f.fields) json[field.key] = WriteField(field, *this);
  json["model_type"] = f.model_type;
  json["architectures"] = nlohmann::json::array({architecture});
  return json;
}

}  // namespace lmtrain
