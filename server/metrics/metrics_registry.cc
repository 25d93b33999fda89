#include "server/metrics/metrics_registry.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

// Misuse of the registry is a programming error: say what and abort.
void Require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "MetricsRegistry: %s\n", what.c_str());
  std::abort();
}

bool ValidName(const std::string& name, bool allow_colon) {
  static const std::regex metric("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static const std::regex label("[a-zA-Z_][a-zA-Z0-9_]*");
  return std::regex_match(name, allow_colon ? metric : label);
}

// Label values escape \, " and newline; HELP text escapes \ and newline.
std::string Escape(const std::string& s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string FormatMetricValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

MetricFamily::MetricFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {
  Require(ValidName(name_, true), absl::StrCat("invalid metric name '", name_, "'"));
  for (const std::string& l : label_names_) {
    Require(ValidName(l, false) && l != "le",
            absl::StrCat(name_, ": invalid label name '", l, "'"));
  }
}

void MetricFamily::CheckLabels(const LabelValues& values) const {
  Require(values.size() == label_names_.size(),
          absl::StrCat(name_, ": ", values.size(), " label values for ", label_names_.size(),
                       " label names"));
}

std::string MetricFamily::LabelText(const LabelValues& values, const std::string& extra) const {
  if (values.empty() && extra.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, label_names_[i], "=\"", Escape(values[i], true), "\"");
  }
  if (!extra.empty()) absl::StrAppend(&out, values.empty() ? "" : ",", extra);
  return out + "}";
}

void MetricFamily::RenderHeader(const char* type, std::string* out) const {
  absl::StrAppend(out, "# HELP ", name_, " ", Escape(help_, false), "\n# TYPE ", name_, " ", type,
                  "\n");
}

void Counter::Increment(const LabelValues& labels, double amount) {
  CheckLabels(labels);
  if (!(amount >= 0)) return;
  absl::MutexLock lock(&mu_);
  values_[labels] += amount;
}

double Counter::Value(const LabelValues& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void Counter::Render(std::string* out) const {
  RenderHeader("counter", out);
  absl::MutexLock lock(&mu_);
  for (const auto& [labels, v] : values_) {
    absl::StrAppend(out, name(), LabelText(labels), " ", FormatMetricValue(v), "\n");
  }
}

void Gauge::Set(const LabelValues& labels, double value) {
  CheckLabels(labels);
  absl::MutexLock lock(&mu_);
  values_[labels] = value;
}

void Gauge::ReplaceAll(std::map<LabelValues, double> values) {
  for (const auto& [labels, v] : values) CheckLabels(labels);
  absl::MutexLock lock(&mu_);
  values_ = std::move(values);
}

void Gauge::Render(std::string* out) const {
  RenderHeader("gauge", out);
  absl::MutexLock lock(&mu_);
  for (const auto& [labels, v] : values_) {
    absl::StrAppend(out, name(), LabelText(labels), " ", FormatMetricValue(v), "\n");
  }
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> label_names,
                     std::vector<double> bounds)
    : MetricFamily(std::move(name), std::move(help), std::move(label_names)),
      bounds_(std::move(bounds)) {
  for (size_t i = 1; i < bounds_.size(); ++i) {
    Require(bounds_[i - 1] < bounds_[i], absl::StrCat(this->name(), ": bounds must ascend"));
  }
}

void Histogram::Observe(const LabelValues& labels, double value) {
  CheckLabels(labels);
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  absl::MutexLock lock(&mu_);
  Series& s = series_[labels];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  ++s.buckets[bucket];
  s.sum += value;
  ++s.count;
}

uint64_t Histogram::Count(const LabelValues& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

void Histogram::Render(std::string* out) const {
  RenderHeader("histogram", out);
  absl::MutexLock lock(&mu_);
  for (const auto& [labels, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      const std::string le = i < bounds_.size() ? FormatMetricValue(bounds_[i]) : "+Inf";
      absl::StrAppend(out, name(), "_bucket", LabelText(labels, absl::StrCat("le=\"", le, "\"")),
                      " ", cumulative, "\n");
    }
    absl::StrAppend(out, name(), "_sum", LabelText(labels), " ", FormatMetricValue(s.sum), "\n");
    absl::StrAppend(out, name(), "_count", LabelText(labels), " ", s.count, "\n");
  }
}

template <typename T, typename... Args>
T* MetricsRegistry::Add(const std::string& name, Args&&... args) {
  absl::MutexLock lock(&mu_);
  for (const auto& f : families_) {
    Require(f->name() != name, absl::StrCat("metric '", name, "' registered twice"));
  }
  auto family = std::make_unique<T>(name, std::forward<Args>(args)...);
  T* raw = family.get();
  families_.push_back(std::move(family));
  return raw;
}

Counter* MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                     std::vector<std::string> label_names) {
  return Add<Counter>(name, help, std::move(label_names));
}

Gauge* MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                 std::vector<std::string> label_names) {
  return Add<Gauge>(name, help, std::move(label_names));
}

Histogram* MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> label_names,
                                         std::vector<double> bounds) {
  return Add<Histogram>(name, help, std::move(label_names), std::move(bounds));
}

std::string MetricsRegistry::Render() const {
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const auto& f : families_) f->Render(&out);
  return out;
}

}  // namespace lmtrain
