// HF's TrainerMemoryTracker (TrainingArguments.skip_memory_metrics = False): for each stage of a
// run — "init" (the model onto its device, the trainer and its optimizer built), "train",
// "eval" (the final evaluation) and "test" (predictions) — how much host and device memory the
// stage left allocated (`alloc`: end - begin) and how far above its end it peaked (`peaked`:
// max(0, peak - end)); their sum is what the stage needed. Torch-free: the measurements come
// from a MemoryProbe.
//
// Metric names are HF's: "<stage>_mem_cpu_alloc_delta", "<stage>_mem_gpu_alloc_delta",
// "<stage>_mem_cpu_peaked_delta", "<stage>_mem_gpu_peaked_delta" (gpu ones only with a
// device), in bytes; init's, with "before_init_mem_cpu" / "before_init_mem_gpu" (what was in
// use when init began), are added to the first stage's metrics after it.
// Not thread-safe: the training loop's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain {

// Where the memory figures come from (an I/O seam: tests give fixed figures).
class MemoryProbe {
 public:
  virtual ~MemoryProbe() = default;
  // The process's resident set in bytes (psutil's rss).
  virtual int64_t HostResident() = 0;
  // Starts a new host peak at the current resident set; false when the peak cannot be reset
  // (HostPeak is then not reported).
  virtual bool ResetHostPeak() = 0;
  // The largest resident set since ResetHostPeak.
  virtual int64_t HostPeak() = 0;
  // Whether the run has a device whose allocator is measured (a GPU).
  virtual bool HasDevice() = 0;
  // Bytes held by tensors on the device (torch.cuda.memory_allocated) and their largest value
  // since ResetDevicePeak (max_memory_allocated).
  virtual int64_t DeviceAllocated() = 0;
  virtual void ResetDevicePeak() = 0;
  virtual int64_t DevicePeak() = 0;
  // Hands the allocator's unused cached blocks back (torch.cuda.empty_cache).
  virtual void ReleaseDeviceCache() = 0;
};

// Metric name and bytes, in HF's order.
using MemoryMetrics = std::vector<std::pair<std::string, int64_t>>;

class MemoryTracker {
 public:
  // `probe` is borrowed and must outlive the tracker.
  explicit MemoryTracker(MemoryProbe* probe) : probe_(probe) {}

  // Starts measuring `stage`. Ignored while another stage is being measured (HF's nested calls:
  // an evaluation inside training belongs to training).
  void Start(const std::string& stage);
  // Ends `stage` (started before) and appends its metrics to *metrics (null: kept for later,
  // as HF does with init), preceded the first time by init's. Ignored for a stage not started.
  void Stop(const std::string& stage, MemoryMetrics* metrics);

 private:
  struct Usage {
    int64_t begin = 0;
    int64_t alloc = 0;
    std::optional<int64_t> peaked;
  };
  struct StageUsage {
    Usage cpu;
    std::optional<Usage> gpu;
  };
  void Append(const std::string& stage, MemoryMetrics* metrics) const;

  MemoryProbe* probe_;
  std::optional<std::string> current_;
  bool host_peak_reset_ = false;
  int64_t cpu_start_ = 0;
  int64_t gpu_start_ = 0;
  std::map<std::string, StageUsage> stages_;
  bool init_reported_ = false;
};

}  // namespace lmtrain
