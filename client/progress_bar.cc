#include "client/progress_bar.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lmtrain {

void ProgressBar::Update(const v1::Metrics& metrics, double now_s) {
  latest_.MergeFrom(metrics);
  if (!metrics.has_step()) return;
  if (!first_.has_value()) first_ = std::make_pair(metrics.step(), now_s);
  latest_time_ = now_s;
}

std::optional<double> ProgressBar::EtaSeconds() const {
  if (!first_.has_value() || !latest_.has_max_steps() || !latest_.has_step()) return std::nullopt;
  const int64_t steps_done = latest_.step() - first_->first;
  const double elapsed = latest_time_ - first_->second;
  if (steps_done <= 0 || elapsed <= 0) return std::nullopt;
  const int64_t left = std::max<int64_t>(0, latest_.max_steps() - latest_.step());
  return left * elapsed / steps_done;
}

std::string ProgressBar::Render() const {
  std::string line;
  const int64_t step = latest_.has_step() ? latest_.step() : 0;
  if (latest_.has_max_steps() && latest_.max_steps() > 0) {
    const double done = std::clamp(static_cast<double>(step) / latest_.max_steps(), 0.0, 1.0);
    const int filled = static_cast<int>(std::floor(done * bar_width_));
    absl::StrAppend(&line, "[", std::string(filled, '#'), std::string(bar_width_ - filled, '.'),
                    "]  ", step, "/", latest_.max_steps());
    absl::StrAppendFormat(&line, "  %3.0f%%", done * 100);
  } else {
    absl::StrAppend(&line, "step ", step);
  }
  if (latest_.has_loss()) absl::StrAppendFormat(&line, "  loss %.4f", latest_.loss());
  if (latest_.has_tokens_per_second()) {
    absl::StrAppendFormat(&line, "  %.0f tok/s", latest_.tokens_per_second());
  }
  if (latest_.has_max_steps()) {
    const std::optional<double> eta = EtaSeconds();
    absl::StrAppend(&line, "  ETA ", eta.has_value() ? FormatDuration(*eta) : "?");
  }
  return line;
}

std::string FormatDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
}

}  // namespace lmtrain
