// ProgressBar: the live line `lmctl watch` redraws on a terminal, from the job's metrics
// events:
//   [##########..........]  150/300  50%  loss 2.3456  12345 tok/s  ETA 1m05s
// The ETA is the remaining steps at the step rate seen so far (from the first metrics
// event this bar saw to the latest), so it needs two events with different steps and
// times; "ETA ?" before that. Without max_steps the bar is left out.
// Not thread-safe: one watch loop owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

class ProgressBar {
 public:
  explicit ProgressBar(int bar_width = 20) : bar_width_(bar_width) {}

  // Merges a metrics event seen at now_s (any monotonic clock, seconds); fields the event
  // lacks keep their last value.
  void Update(const v1::Metrics& metrics, double now_s);
  bool has_step() const { return latest_.has_step(); }
  // The line, without "\r" or newline.
  std::string Render() const;
  // Seconds left, when known.
  std::optional<double> EtaSeconds() const;

 private:
  int bar_width_;
  v1::Metrics latest_;
  std::optional<std::pair<int64_t, double>> first_;  // (step, time) of the first step seen.
  double latest_time_ = 0;
};

// "45s", "3m07s", "2h05m".
std::string FormatDuration(double seconds);

}  // namespace lmtrain
