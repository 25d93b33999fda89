#include "worker/trainer_base/training_reporter.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/trainer_base/py_repr.h"

namespace lmtrain {
namespace {

using PyItems = std::vector<std::pair<std::string, PyNumber>>;

double Rate(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

std::string ProgressLine(const TrainLogRecord& r) {
  const double done = r.max_steps > 0 ? static_cast<double>(r.step) / r.max_steps : 1.0;
  const double eta = done > 0 ? r.elapsed_seconds * (1.0 - done) / done : 0.0;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "[step %lld/%lld %3.0f%%] loss %.4f | lr %.3e | grad_norm %.3f | "
                "%.0f tokens/s | %s elapsed, %s left",
                static_cast<long long>(r.step), static_cast<long long>(r.max_steps), 100.0 * done,
                r.loss, r.learning_rate, r.grad_norm, r.tokens_per_second,
                FormatDuration(r.elapsed_seconds).c_str(), FormatDuration(eta).c_str());
  return buf;
}

// Python's dict order for printing, from a json object and a key order.
PyItems Pick(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  PyItems items;
  for (const char* key : keys) {
    if (!j.contains(key) || !j[key].is_number()) continue;
    items.emplace_back(key, j[key].is_number_integer() ? PyNumber::Int(j[key].get<int64_t>())
                                                       : PyNumber(j[key].get<double>()));
  }
  return items;
}

}  // namespace

TrainingReporter::TrainingReporter(EventSink* sink, std::ostream* out, std::ostream* err,
                                   LogCallback* callback)
    : sink_(sink), out_(out), err_(err), callback_(callback) {}

std::string TrainingReporter::PrintedDict(const PyItems& items, const PyItems& after) const {
  std::string text = PyDictRepr(items);
  if (!input_tokens_seen_) return text;
  text.pop_back();  // The closing brace.
  absl::StrAppend(&text, items.empty() ? "" : ", ",
                  "'num_input_tokens_seen': ", *input_tokens_seen_);
  const std::string rest = PyDictRepr(after);  // "{'a': 1.0, ...}"
  if (!after.empty()) absl::StrAppend(&text, ", ", rest.substr(1, rest.size() - 2));
  return text + "}";
}

void TrainingReporter::Log(nlohmann::json entry, const nlohmann::json& extra) {
  if (input_tokens_seen_) entry["num_input_tokens_seen"] = *input_tokens_seen_;
  if (callback_ != nullptr) {
    nlohmann::json logs = entry;
    logs.erase("step");
    logs.update(extra);
    callback_->OnLog(logs, entry["step"].get<int64_t>());
  }
  log_history_.push_back(std::move(entry));
}

void TrainingReporter::OnTrainLog(const TrainLogRecord& r) {
  nlohmann::json entry = {{"loss", PyRound(r.loss, 4)},
                          {"grad_norm", r.grad_norm},
                          {"learning_rate", r.learning_rate},
                          {"epoch", PyRound(r.epoch, 2)},
                          {"step", r.step}};
  PyItems speed;  // HF's speed_metrics("train", start_time, num_tokens=...) of each log.
  if (input_tokens_seen_) {
    speed.emplace_back("train_runtime", PyRound(r.elapsed_seconds, 4));
    if (r.elapsed_seconds > 0) {
      speed.emplace_back(
          "train_tokens_per_second",
          PyRound(static_cast<double>(r.session_input_tokens) / r.elapsed_seconds, 3));
    }
    for (const auto& [key, value] : speed) entry[key] = value.value;
  }
  *out_ << PrintedDict(Pick(entry, {"loss", "grad_norm", "learning_rate", "epoch"}), speed) << "\n"
        << ProgressLine(r) << std::endl;
  Log(std::move(entry), {{"tokens_per_second", r.tokens_per_second}});
  TrainerEvent event;
  event.metrics.step = r.step;
  event.metrics.max_steps = r.max_steps;
  event.metrics.loss = r.loss;
  event.metrics.learning_rate = r.learning_rate;
  event.metrics.grad_norm = r.grad_norm;
  event.metrics.epoch = r.epoch;
  event.metrics.tokens_per_second = r.tokens_per_second;
  event.metrics.num_input_tokens_seen = input_tokens_seen_;
  Emit(event);
}

void TrainingReporter::OnEval(const EvalLogRecord& r) {
  nlohmann::json entry = EvalMetricsJson(r);
  entry["epoch"] = PyRound(r.epoch, 2);
  entry["step"] = r.step;
  PyItems items;
  if (r.eval_loss) items.emplace_back("eval_loss", *r.eval_loss);
  for (const auto& [name, value] : r.metrics) items.emplace_back(name, value);
  for (const auto& item :
       Pick(entry, {"eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "epoch"})) {
    items.push_back(item);
  }
  *out_ << PrintedDict(items) << std::endl;
  Log(std::move(entry));
  TrainerEvent event;
  event.metrics.step = r.step;
  event.metrics.epoch = r.epoch;
  event.metrics.eval_loss = r.eval_loss;
  event.metrics.num_input_tokens_seen = input_tokens_seen_;
  for (const auto& [name, value] : r.metrics) {
    if (name == "perplexity") {
      event.metrics.perplexity = value;
    } else {
      event.metrics.eval_metrics[name] = value;
    }
  }
  Emit(event);
}

void TrainingReporter::Info(const std::string& message) { *out_ << message << std::endl; }

void TrainingReporter::Warn(const std::string& message) {
  *err_ << "warning: " << message << std::endl;
}

void TrainingReporter::OnCheckpoint(int64_t step, const std::string& path) {
  *out_ << "Saved model checkpoint to " << path << std::endl;
  TrainerEvent event;
  event.type = TrainerEvent::Type::kCheckpoint;
  event.step = step;
  event.path = path;
  Emit(event);
}

void TrainingReporter::OnTrainEnd(const TrainSummary& s) {
  nlohmann::json entry = SpeedMetricsJson("train", s.runtime_seconds, s.num_samples, s.step);
  entry.update({{"total_flos", s.total_flos},
                {"train_loss", s.train_loss},
                {"epoch", PyRound(s.epoch, 2)},
                {"step", s.step}});
  PyItems printed = Pick(
      entry, {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss"});
  for (const auto& [name, bytes] : s.memory) {  // HF's order: after train_loss, before epoch.
    entry[name] = bytes;
    printed.emplace_back(name, PyNumber::Int(bytes));
  }
  printed.emplace_back("epoch", PyRound(s.epoch, 2));
  *out_ << PrintedDict(printed) << std::endl;
  Log(std::move(entry));
}

void TrainingReporter::Emit(const TrainerEvent& event) {
  if (sink_failed_) return;
  absl::Status status = sink_->Emit(event);
  if (status.ok()) return;
  sink_failed_ = true;
  *err_ << "warning: " << status.message() << "; no further trainer events are sent" << std::endl;
}

nlohmann::json EvalMetricsJson(const EvalLogRecord& r) {
  nlohmann::json j = SpeedMetricsJson("eval", r.runtime_seconds, r.num_samples, r.num_batches);
  if (r.eval_loss) j["eval_loss"] = *r.eval_loss;
  for (const auto& [name, value] : r.metrics) j[name] = value;
  return j;
}

std::string FormatDuration(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  return buf;
}

nlohmann::json SpeedMetricsJson(const std::string& prefix, double runtime_seconds, double samples,
                                double steps) {
  return {{prefix + "_runtime", PyRound(runtime_seconds, 4)},
          {prefix + "_samples_per_second", PyRound(Rate(samples, runtime_seconds), 3)},
          {prefix + "_steps_per_second", PyRound(Rate(steps, runtime_seconds), 3)}};
}

}  // namespace lmtrain
