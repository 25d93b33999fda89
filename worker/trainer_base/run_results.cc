#include "worker/trainer_base/run_results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "worker/trainer_base/py_repr.h"

namespace lmtrain {
namespace {

absl::Status WriteJson(const std::string& dir, const std::string& name, const nlohmann::json& j) {
  return WriteFileAtomically(dir + "/" + name, j.dump(4) + "\n");
}

}  // namespace

nlohmann::json TrainResultsJson(const TrainSummary& s, int64_t train_samples) {
  nlohmann::json j = SpeedMetricsJson("train", s.runtime_seconds, s.num_samples, s.step);
  j.update({{"epoch", PyRound(s.epoch, 2)},
            {"total_flos", s.total_flos},
            {"train_loss", s.train_loss},
            {"train_samples", train_samples}});
  AddMemoryMetrics(s.memory, &j);
  return j;
}

void AddMemoryMetrics(const MemoryMetrics& metrics, nlohmann::json* results) {
  for (const auto& [name, bytes] : metrics) (*results)[name] = bytes;
}

nlohmann::json EvalResultsJson(const EvalLogRecord& record) {
  nlohmann::json j = EvalMetricsJson(record);
  j["epoch"] = PyRound(record.epoch, 2);
  j["eval_samples"] = record.num_samples;
  return j;
}

nlohmann::json PredictResultsJson(const std::vector<std::pair<std::string, double>>& metrics,
                                  double t, int64_t num_samples, int64_t num_batches) {
  nlohmann::json j = SpeedMetricsJson("predict", t, num_samples, num_batches);
  for (const auto& [name, value] : metrics) j[name] = value;
  j["predict_samples"] = num_samples;
  return j;
}

namespace {

// Python's str(datetime.timedelta(seconds=n)) for n >= 0: "H:MM:SS", "1 day, H:MM:SS".
std::string TimedeltaText(int64_t seconds) {
  const int64_t days = seconds / 86400;
  const int64_t rest = seconds % 86400;
  char clock[32];
  std::snprintf(clock, sizeof(clock), "%lld:%02lld:%02lld", static_cast<long long>(rest / 3600),
                static_cast<long long>(rest % 3600 / 60), static_cast<long long>(rest % 60));
  if (days == 0) return clock;
  return std::to_string(days) + (days == 1 ? " day, " : " days, ") + clock;
}

// HF's _secs2timedelta.
std::string RuntimeText(double secs) {
  const double whole = std::trunc(secs);
  const int64_t centis = static_cast<int64_t>(std::fabs(secs - whole) * 100);
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%02lld", static_cast<long long>(centis));
  return TimedeltaText(static_cast<int64_t>(whole)) + frac;
}

// Python's floor shift of an int: v >> bits.
int64_t FloorShift(int64_t v, int bits) { return v >= 0 ? v >> bits : ~((~v) >> bits); }

// One value as Trainer.metrics_format leaves it, then as Python's str() prints it.
std::string FormattedValue(const std::string& key, const nlohmann::json& v) {
  if (key.find("_mem_") != std::string::npos && v.is_number_integer()) {
    return std::to_string(FloorShift(v.get<int64_t>(), 20)) + "MB";
  }
  if (key.find("_runtime") != std::string::npos && v.is_number()) {
    return RuntimeText(v.get<double>());
  }
  if (key == "total_flos" && v.is_number()) {
    return std::to_string(FloorShift(static_cast<int64_t>(v.get<double>()), 30)) + "GF";
  }
  if (v.is_number_float()) return PyFloatRepr(PyRound(v.get<double>(), 4));
  if (v.is_number()) return v.dump();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

}  // namespace

std::string MetricsBlock(const std::string& split, const nlohmann::json& metrics) {
  std::vector<std::pair<std::string, std::string>> rows;  // Sorted: json objects are.
  size_t key_width = 0, value_width = 0;
  for (const auto& [key, value] : metrics.items()) {
    rows.emplace_back(key, FormattedValue(key, value));
    key_width = std::max(key_width, key.size());
    value_width = std::max(value_width, rows.back().second.size());
  }
  std::string text = "***** " + split + " metrics *****\n";
  for (const auto& [key, value] : rows) {
    text += "  " + key + std::string(key_width - key.size(), ' ') + " = " +
            std::string(value_width - value.size(), ' ') + value + "\n";
  }
  return text;
}

absl::Status WriteRunResults(const std::string& dir, const std::optional<nlohmann::json>& train,
                             const std::optional<nlohmann::json>& eval,
                             const std::optional<nlohmann::json>& predict) {
  nlohmann::json all = nlohmann::json::object();
  if (train.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "train_results.json", *train));
    all.update(*train);
  }
  if (eval.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "eval_results.json", *eval));
    all.update(*eval);
  }
  if (predict.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "predict_results.json", *predict));
    all.update(*predict);
  }
  return WriteJson(dir, "all_results.json", all);
}

}  // namespace lmtrain
