// MetricsRegistry: a small Prometheus registry (counters, gauges, histograms with labels) that
// renders the text exposition format 0.0.4. No global state: lm-server owns one instance and
// hands pointers to whoever records into it.
//
//   MetricsRegistry r;
//   Counter* c = r.AddCounter("lmtrain_grpc_requests_total", "gRPC requests.", {"method", "code"});
//   c->Increment({"/lmtrain.v1.JobService/GetJob", "OK"});
//   std::string text = r.Render();  // # HELP / # TYPE / samples, families in registration order
//
// Families are registered once at start-up (names must match [a-zA-Z_:][a-zA-Z0-9_:]* and be
// unique, label names [a-zA-Z_][a-zA-Z0-9_]*; violations are programming errors and abort).
// Label values are given in the order of the family's label names and escaped on output.
// Recording with the wrong number of label values is a programming error (aborts).
//
// Thread-safe: every method may be called from any thread; family pointers stay valid for the
// registry's lifetime.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace lmtrain {

using LabelValues = std::vector<std::string>;

class MetricFamily {
 public:
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names);
  virtual ~MetricFamily() = default;
  MetricFamily(const MetricFamily&) = delete;
  MetricFamily& operator=(const MetricFamily&) = delete;

  const std::string& name() const { return name_; }
  // Appends this family's HELP, TYPE and sample lines to *out.
  virtual void Render(std::string* out) const = 0;

 protected:
  void CheckLabels(const LabelValues& values) const;
  // `{a="x",b="y"}` (plus `extra`, e.g. le="0.5"), or "" when there are no labels at all.
  std::string LabelText(const LabelValues& values, const std::string& extra = "") const;
  void RenderHeader(const char* type, std::string* out) const;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
};

// Monotonic counter per label set. Increment by a negative amount is ignored.
class Counter : public MetricFamily {
 public:
  using MetricFamily::MetricFamily;
  void Increment(const LabelValues& labels, double amount = 1);
  double Value(const LabelValues& labels) const;  // 0 for a label set never incremented.
  void Render(std::string* out) const override;

 private:
  mutable absl::Mutex mu_;
  std::map<LabelValues, double> values_ ABSL_GUARDED_BY(mu_);
};

// A value that goes up and down. ReplaceAll swaps in a whole new set of series (for values
// computed at scrape time, so series of things that disappeared disappear too).
class Gauge : public MetricFamily {
 public:
  using MetricFamily::MetricFamily;
  void Set(const LabelValues& labels, double value);
  void ReplaceAll(std::map<LabelValues, double> values);
  void Render(std::string* out) const override;

 private:
  mutable absl::Mutex mu_;
  std::map<LabelValues, double> values_ ABSL_GUARDED_BY(mu_);
};

// Cumulative histogram with fixed upper bounds (ascending, +Inf implied).
class Histogram : public MetricFamily {
 public:
  Histogram(std::string name, std::string help, std::vector<std::string> label_names,
            std::vector<double> bounds);
  void Observe(const LabelValues& labels, double value);
  // Observations so far for the label set (0 if none).
  uint64_t Count(const LabelValues& labels) const;
  void Render(std::string* out) const override;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // Per bound, not cumulative; last one is +Inf.
    double sum = 0;
    uint64_t count = 0;
  };
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::map<LabelValues, Series> series_ ABSL_GUARDED_BY(mu_);
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Counter* AddCounter(const std::string& name, const std::string& help,
                      std::vector<std::string> label_names = {});
  Gauge* AddGauge(const std::string& name, const std::string& help,
                  std::vector<std::string> label_names = {});
  Histogram* AddHistogram(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names, std::vector<double> bounds);

  // Every family in registration order, in the text exposition format 0.0.4.
  std::string Render() const;

 private:
  template <typename T, typename... Args>
  T* Add(const std::string& name, Args&&... args);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_ ABSL_GUARDED_BY(mu_);
};

// The Prometheus content type for Render()'s output.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A sample value as Prometheus writes it: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string FormatMetricValue(double v);

}  // namespace lmtrain
