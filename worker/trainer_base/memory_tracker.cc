#include "worker/trainer_base/memory_tracker.h"

#include <algorithm>

namespace lmtrain {

void MemoryTracker::Start(const std::string& stage) {
  if (current_.has_value()) return;
  current_ = stage;
  if (probe_->HasDevice()) {
    probe_->ResetDevicePeak();
    probe_->ReleaseDeviceCache();
    gpu_start_ = probe_->DeviceAllocated();
  }
  cpu_start_ = probe_->HostResident();
  host_peak_reset_ = probe_->ResetHostPeak();
}

void MemoryTracker::Stop(const std::string& stage, MemoryMetrics* metrics) {
  if (current_ != stage) return;
  current_.reset();
  StageUsage usage;
  if (probe_->HasDevice()) {
    probe_->ReleaseDeviceCache();
    const int64_t now = probe_->DeviceAllocated();
    usage.gpu =
        Usage{gpu_start_, now - gpu_start_, std::max<int64_t>(0, probe_->DevicePeak() - now)};
  }
  const int64_t now = probe_->HostResident();
  usage.cpu = Usage{cpu_start_, now - cpu_start_, std::nullopt};
  if (host_peak_reset_) usage.cpu.peaked = std::max<int64_t>(0, probe_->HostPeak() - now);
  stages_[stage] = usage;
  if (metrics == nullptr) return;
  const auto init = stages_.find("init");
  const bool with_init = !init_reported_ && init != stages_.end() && stage != "init";
  init_reported_ = true;
  if (with_init) Append("init", metrics);
  Append(stage, metrics);
  if (!with_init) return;
  metrics->emplace_back("before_init_mem_cpu", init->second.cpu.begin);
  if (init->second.gpu) metrics->emplace_back("before_init_mem_gpu", init->second.gpu->begin);
}

void MemoryTracker::Append(const std::string& stage, MemoryMetrics* metrics) const {
  const StageUsage& usage = stages_.at(stage);
  metrics->emplace_back(stage + "_mem_cpu_alloc_delta", usage.cpu.alloc);
  if (usage.gpu) metrics->emplace_back(stage + "_mem_gpu_alloc_delta", usage.gpu->alloc);
  if (usage.cpu.peaked) metrics->emplace_back(stage + "_mem_cpu_peaked_delta", *usage.cpu.peaked);
  if (usage.gpu && usage.gpu->peaked) {
    metrics->emplace_back(stage + "_mem_gpu_peaked_delta", *usage.gpu->peaked);
  }
}

}  // namespace lmtrain
