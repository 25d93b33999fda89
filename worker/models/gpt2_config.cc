#include "worker/models/gpt2_config.h"

#include <algorithm>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "worker/models/activation_name.h"

namespace lmtrain {
namespace {

using Member = std::variant<int64_t Gpt2Config::*, double Gpt2Config::*, bool Gpt2Config::*,
                            std::string Gpt2Config::*, std::optional<int64_t> Gpt2Config::*,
                            std::optional<std::string> Gpt2Config::*>;

struct Field {
  absl::string_view name;
  Member member;
  bool always_written;  // GPT2Config's own keys; generic ones are written when not default.
};

// The parser and the writer are this table.
const Field kFields[] = {
    {"vocab_size", &Gpt2Config::vocab_size, true},
    {"n_positions", &Gpt2Config::n_positions, true},
    {"n_embd", &Gpt2Config::n_embd, true},
    {"n_layer", &Gpt2Config::n_layer, true},
    {"n_head", &Gpt2Config::n_head, true},
    {"n_inner", &Gpt2Config::n_inner, true},
    {"activation_function", &Gpt2Config::activation_function, true},
    {"resid_pdrop", &Gpt2Config::resid_pdrop, true},
    {"embd_pdrop", &Gpt2Config::embd_pdrop, true},
    {"attn_pdrop", &Gpt2Config::attn_pdrop, true},
    {"layer_norm_epsilon", &Gpt2Config::layer_norm_epsilon, true},
    {"initializer_range", &Gpt2Config::initializer_range, true},
    {"summary_type", &Gpt2Config::summary_type, true},
    {"summary_use_proj", &Gpt2Config::summary_use_proj, true},
    {"summary_activation", &Gpt2Config::summary_activation, true},
    {"summary_proj_to_labels", &Gpt2Config::summary_proj_to_labels, true},
    {"summary_first_dropout", &Gpt2Config::summary_first_dropout, true},
    {"scale_attn_weights", &Gpt2Config::scale_attn_weights, true},
    {"use_cache", &Gpt2Config::use_cache, true},
    {"scale_attn_by_inverse_layer_idx", &Gpt2Config::scale_attn_by_inverse_layer_idx, true},
    {"reorder_and_upcast_attn", &Gpt2Config::reorder_and_upcast_attn, true},
    {"bos_token_id", &Gpt2Config::bos_token_id, true},
    {"eos_token_id", &Gpt2Config::eos_token_id, true},
    {"pad_token_id", &Gpt2Config::pad_token_id, false},
    {"tie_word_embeddings", &Gpt2Config::tie_word_embeddings, false},
};

// Keys owned by the writer rather than by a field.
constexpr absl::string_view kWriterKeys[] = {"model_type", "architectures", "transformers_version"};

absl::Status TypeError(absl::string_view name, absl::string_view expected,
                       const nlohmann::json& got) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, " must be ", expected, " (got ", got.dump(), ")"));
}

absl::Status ReadField(const Field& field, const nlohmann::json& value, Gpt2Config& config) {
  struct Reader {
    const Field& field;
    const nlohmann::json& value;
    Gpt2Config& config;
    absl::Status operator()(int64_t Gpt2Config::*m) const {
      if (!value.is_number_integer()) return TypeError(field.name, "an integer", value);
      config.*m = value.get<int64_t>();
      return absl::OkStatus();
    }
    absl::Status operator()(double Gpt2Config::*m) const {
      if (!value.is_number()) return TypeError(field.name, "a number", value);
      config.*m = value.get<double>();
      return absl::OkStatus();
    }
    absl::Status operator()(bool Gpt2Config::*m) const {
      if (!value.is_boolean()) return TypeError(field.name, "true or false", value);
      config.*m = value.get<bool>();
      return absl::OkStatus();
    }
    absl::Status operator()(std::string Gpt2Config::*m) const {
      if (!value.is_string()) return TypeError(field.name, "a string", value);
      config.*m = value.get<std::string>();
      return absl::OkStatus();
    }
    absl::Status operator()(std::optional<int64_t> Gpt2Config::*m) const {
      if (value.is_null()) return (config.*m = std::nullopt, absl::OkStatus());
      if (!value.is_number_integer()) return TypeError(field.name, "an integer or null", value);
      config.*m = value.get<int64_t>();
      return absl::OkStatus();
    }
    absl::Status operator()(std::optional<std::string> Gpt2Config::*m) const {
      if (value.is_null()) return (config.*m = std::nullopt, absl::OkStatus());
      if (!value.is_string()) return TypeError(field.name, "a string or null", value);
      config.*m = value.get<std::string>();
      return absl::OkStatus();
    }
  };
  return std::visit(Reader{field, value, config}, field.member);
}

nlohmann::json FieldValue(const Field& field, const Gpt2Config& config) {
  return std::visit(
      [&config](auto member) -> nlohmann::json {
        const auto& value = config.*member;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::optional<int64_t>> ||
                      std::is_same_v<std::decay_t<decltype(value)>, std::optional<std::string>>) {
          return value.has_value() ? nlohmann::json(*value) : nlohmann::json(nullptr);
        } else {
          return value;
        }
      },
      field.member);
}

absl::Status CheckPositive(std::initializer_list<std::pair<absl::string_view, int64_t>> values) {
  for (const auto& [name, value] : values) {
    if (value <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be > 0 (got ", value, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckProbabilities(
    std::initializer_list<std::pair<absl::string_view, double>> values) {
  for (const auto& [name, value] : values) {
    if (!(value >= 0.0 && value < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be in [0, 1) (got ", value, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const Gpt2Config& c) {
  RETURN_IF_ERROR(CheckPositive({{"vocab_size", c.vocab_size},
                                 {"n_positions", c.n_positions},
                                 {"n_embd", c.n_embd},
                                 {"n_layer", c.n_layer},
                                 {"n_head", c.n_head},
                                 {"n_inner", c.n_inner.value_or(1)}}));
  if (c.n_embd % c.n_head != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("n_embd (", c.n_embd, ") must be divisible by n_head (", c.n_head, ")"));
  }
  RETURN_IF_ERROR(CheckProbabilities({{"resid_pdrop", c.resid_pdrop},
                                      {"embd_pdrop", c.embd_pdrop},
                                      {"attn_pdrop", c.attn_pdrop}}));
  if (!(c.layer_norm_epsilon > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer_norm_epsilon must be > 0 (got ", c.layer_norm_epsilon, ")"));
  }
  if (!(c.initializer_range >= 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("initializer_range must be >= 0 (got ", c.initializer_range, ")"));
  }
  absl::StatusOr<Activation> activation = ParseActivation(c.activation_function);
  if (!activation.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("activation_function: ", activation.status().message()));
  }
  return absl::OkStatus();
}

absl::Status CheckWriterKeys(const nlohmann::json& json) {
  auto model_type = json.find("model_type");
  if (model_type != json.end() && *model_type != "gpt2") {
    return absl::InvalidArgumentError(
        absl::StrCat("model_type must be \"gpt2\" (got ", model_type->dump(), ")"));
  }
  auto cross = json.find("add_cross_attention");
  if (cross != json.end() && *cross == true) {
    return absl::InvalidArgumentError(
        "add_cross_attention is true: GPT-2 with cross-attention is not supported");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Gpt2Config> Gpt2Config::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return TypeError("a GPT-2 config", "a JSON object", json);
  RETURN_IF_ERROR(CheckWriterKeys(json));
  Gpt2Config config;
  for (const auto& [key, value] : json.items()) {
    const Field* field = nullptr;
    for (const Field& candidate : kFields) {
      if (candidate.name == key) field = &candidate;
    }
    if (field != nullptr) {
      RETURN_IF_ERROR(ReadField(*field, value, config));
    } else if (std::find(std::begin(kWriterKeys), std::end(kWriterKeys), key) ==
               std::end(kWriterKeys)) {
      config.extra[key] = value;
    }
  }
  RETURN_IF_ERROR(Validate(config));
  return config;
}

nlohmann::json Gpt2Config::ToJson() const {
  static const Gpt2Config kDefaults;
  nlohmann::json json = extra;
  for (const Field& field : kFields) {
    nlohmann::json value = FieldValue(field, *this);
    if (field.always_written || value != FieldValue(field, kDefaults)) {
      json[std::string(field.name)] = std::move(value);
    }
  }
  json["architectures"] = nlohmann::json::array({"GPT2LMHeadModel"});
  json["model_type"] = "gpt2";
  return json;
}

}  // namespace lmtrain
