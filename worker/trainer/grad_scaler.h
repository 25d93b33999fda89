// Dynamic loss scaling for fp16 training, as PyTorch's torch.amp.GradScaler (which HF's Trainer
// uses with fp16: true):
//   - the loss is multiplied by the scale before backward (initially 65536);
//   - before clipping, the gradients are divided by it and checked for inf/nan in one
//     multi-tensor pass per device and dtype (at::_amp_foreach_non_finite_check_and_unscale_);
//   - a step whose gradients overflowed is skipped and the scale is multiplied by 0.5; after
//     growth_interval (2000) clean steps in a row it is multiplied by 2
//     (at::_amp_update_scale_, the same kernel as PyTorch's).
// The state (scale and the count of clean steps) is what a checkpoint's scaler.pt holds, with
// GradScaler.state_dict()'s keys, so a resumed run scales exactly as an uninterrupted one.
// Not thread-safe: the training loop's thread only.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lmtrain {

class GradScaler {
 public:
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
  };

  // The scale lives on `device` (the model's), as the gradients it checks.
  GradScaler(Options options, c10::Device device);

  // loss * scale (for backward only; report the unscaled loss).
  torch::Tensor Scale(const torch::Tensor& loss) const;
  // Divides every defined gradient of `params` by the scale in place and records whether any
  // element is inf or nan. Returns that (one wait for the device). Call once per step, after
  // the gradients are complete (summed across ranks) and before clipping.
  bool UnscaleAndCheck(const std::vector<torch::Tensor>& params);
  // Adjusts the scale from the last UnscaleAndCheck: backoff after an overflow, growth after
  // growth_interval clean steps.
  void Update();

  double scale() const;
  int64_t growth_tracker() const;

  // scaler.pt: a dict {"scale", "growth_factor", "backoff_factor", "growth_interval",
  // "_growth_tracker"} pickled as torch.save writes it. Internal / DataLoss naming the path.
  absl::Status Save(const std::string& path) const;
  absl::Status Load(const std::string& path);

 private:
  Options options_;
  torch::Tensor scale_;           // [1] float32 on the device.
  torch::Tensor growth_tracker_;  // [1] int32 on the device.
  torch::Tensor found_inf_;       // [1] float32: 1 when the last check found inf/nan.
};

}  // namespace lmtrain
