#include "common/training_metrics.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/json_integer.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// The single table of metric fields: JSON name <-> member.
template <typename Fn>
void ForEachField(TrainingMetrics& m, Fn&& fn) {
  fn("step", m.step);
  fn("max_steps", m.max_steps);
  fn("loss", m.loss);
  fn("learning_rate", m.learning_rate);
  fn("eval_loss", m.eval_loss);
  fn("perplexity", m.perplexity);
  fn("tokens_per_second", m.tokens_per_second);
  fn("epoch", m.epoch);
  fn("grad_norm", m.grad_norm);
  fn("num_input_tokens_seen", m.num_input_tokens_seen);
}

// JSON has no NaN or infinities (nlohmann writes them as null, which reads back as "not set"),
// so they travel as the strings "NaN", "Infinity" and "-Infinity": a NaN loss must still arrive.
nlohmann::json FieldToJson(int64_t v) { return v; }
nlohmann::json FieldToJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

const char* KindName(const std::optional<int64_t>&) { return "an integer"; }
const char* KindName(const std::optional<double>&) { return "a number"; }

// Reads one field's JSON value; false when its type does not fit the field.
bool ReadField(const nlohmann::json& j, std::optional<int64_t>& field) {
  const std::optional<int64_t> value = JsonInteger<int64_t>(j);  // 1.5 or 1e30 are not steps
  if (value.has_value()) field = value;
  return value.has_value();
}

bool ReadField(const nlohmann::json& j, std::optional<double>& field) {
  if (j.is_number()) {
    field = j.get<double>();
    return true;
  }
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  if (s == "NaN") {
    field = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity" || s == "-Infinity") {
    field = (s[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

// The optional "eval_metrics" object: names to numbers (or the NaN/infinity strings).
absl::Status ReadEvalMetrics(const nlohmann::json& j, std::map<std::string, double>& out) {
  auto it = j.find("eval_metrics");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError("metrics: 'eval_metrics' is not an object: " + it->dump());
  }
  for (const auto& [name, value] : it->items()) {
    std::optional<double> field;
    if (!ReadField(value, field)) {
      return absl::InvalidArgumentError("metrics: 'eval_metrics." + name +
                                        "' is not a number: " + value.dump());
    }
    out[name] = *field;
  }
  return absl::OkStatus();
}

}  // namespace

void TrainingMetrics::MergeFrom(const TrainingMetrics& newer) {
  auto merge = [](auto& dst, const auto& src) {
    if (src.has_value()) dst = src;
  };
  merge(step, newer.step);
  merge(max_steps, newer.max_steps);
  merge(loss, newer.loss);
  merge(learning_rate, newer.learning_rate);
  merge(eval_loss, newer.eval_loss);
  merge(perplexity, newer.perplexity);
  merge(tokens_per_second, newer.tokens_per_second);
  merge(epoch, newer.epoch);
  merge(grad_norm, newer.grad_norm);
  merge(num_input_tokens_seen, newer.num_input_tokens_seen);
  if (!newer.eval_metrics.empty()) eval_metrics = newer.eval_metrics;
}

bool TrainingMetrics::operator==(const TrainingMetrics& o) const {
  return step == o.step && max_steps == o.max_steps && loss == o.loss &&
         learning_rate == o.learning_rate && eval_loss == o.eval_loss &&
         perplexity == o.perplexity && tokens_per_second == o.tokens_per_second &&
         epoch == o.epoch && grad_norm == o.grad_norm &&
         num_input_tokens_seen == o.num_input_tokens_seen && eval_metrics == o.eval_metrics;
}

std::string MetricsToJson(const TrainingMetrics& m) {
  nlohmann::json j = nlohmann::json::object();
  TrainingMetrics copy = m;
  ForEachField(copy, [&](const char* name, auto& field) {
    if (field.has_value()) j[name] = FieldToJson(*field);
  });
  if (!m.eval_metrics.empty()) {
    nlohmann::json& eval = j["eval_metrics"] = nlohmann::json::object();
    for (const auto& [name, value] : m.eval_metrics) eval[name] = FieldToJson(value);
  }
  return j.dump();
}

absl::StatusOr<TrainingMetrics> MetricsFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("metrics: not a JSON object");
  }
  TrainingMetrics m;
  absl::Status status;
  ForEachField(m, [&](const char* name, auto& field) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return;
    if (!ReadField(*it, field) && status.ok()) {
      status = absl::InvalidArgumentError(std::string("metrics: '") + name + "' is not " +
                                          KindName(field) + ": " + it->dump());
    }
  });
  if (!status.ok()) return status;
  RETURN_IF_ERROR(ReadEvalMetrics(j, m.eval_metrics));
  return m;
}

}  // namespace lmtrain
