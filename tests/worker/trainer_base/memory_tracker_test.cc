// MemoryTracker against HF's TrainerMemoryTracker (transformers/trainer_utils.py) on fixed
// figures, and ProcessMemoryProbe on this process's real memory.
#include "worker/trainer_base/memory_tracker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "worker/trainer_base/process_memory_probe.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Figures the test sets; every call is counted so the tracker's calls can be checked.
class FixedProbe : public MemoryProbe {
 public:
  int64_t HostResident() override { return rss; }
  bool ResetHostPeak() override {
    ++host_resets;
    return host_peak_resettable;
  }
  int64_t HostPeak() override { return host_peak; }
  bool HasDevice() override { return device; }
  int64_t DeviceAllocated() override { return allocated; }
  void ResetDevicePeak() override { ++device_resets; }
  int64_t DevicePeak() override { return device_peak; }
  void ReleaseDeviceCache() override { ++cache_releases; }

  int64_t rss = 0, host_peak = 0, allocated = 0, device_peak = 0;
  bool device = false, host_peak_resettable = true;
  int host_resets = 0, device_resets = 0, cache_releases = 0;
};

TEST(MemoryTrackerTest, InitGoesIntoTheFirstStageWithHfsNamesAndOrder) {
  FixedProbe probe;
  probe.device = true;
  MemoryTracker tracker(&probe);
  probe.rss = 1000, probe.allocated = 10;
  tracker.Start("init");
  probe.rss = 1500, probe.host_peak = 1700, probe.allocated = 60, probe.device_peak = 90;
  tracker.Stop("init", nullptr);
  tracker.Start("train");
  probe.rss = 1400, probe.host_peak = 3000, probe.allocated = 160, probe.device_peak = 500;
  MemoryMetrics train;
  tracker.Stop("train", &train);
  EXPECT_THAT(
      train,
      ElementsAre(Pair("init_mem_cpu_alloc_delta", 500), Pair("init_mem_gpu_alloc_delta", 50),
                  Pair("init_mem_cpu_peaked_delta", 200), Pair("init_mem_gpu_peaked_delta", 30),
                  Pair("train_mem_cpu_alloc_delta", -100), Pair("train_mem_gpu_alloc_delta", 100),
                  Pair("train_mem_cpu_peaked_delta", 1600), Pair("train_mem_gpu_peaked_delta", 340),
                  Pair("before_init_mem_cpu", 1000), Pair("before_init_mem_gpu", 10)));
  // Each stage starts a new peak and hands cached device blocks back at both ends (HF's
  // reset_peak_memory_stats and empty_cache).
  EXPECT_EQ(probe.host_resets, 2);
  EXPECT_EQ(probe.device_resets, 2);
  EXPECT_EQ(probe.cache_releases, 4);

  // Later stages carry only their own; a peak below the end reads 0.
  tracker.Start("eval");
  probe.rss = 1450, probe.host_peak = 1200, probe.allocated = 150, probe.device_peak = 150;
  MemoryMetrics eval;
  tracker.Stop("eval", &eval);
  EXPECT_THAT(
      eval,
      ElementsAre(Pair("eval_mem_cpu_alloc_delta", 50), Pair("eval_mem_gpu_alloc_delta", -10),
                  Pair("eval_mem_cpu_peaked_delta", 0), Pair("eval_mem_gpu_peaked_delta", 0)));
}

TEST(MemoryTrackerTest, NestedAndUnstartedStagesAreIgnored) {
  FixedProbe probe;
  MemoryTracker tracker(&probe);
  tracker.Start("init");
  tracker.Stop("init", nullptr);
  probe.rss = 100;
  tracker.Start("train");
  probe.rss = 900, probe.host_peak = 900;
  tracker.Start("eval");  // An evaluation during training belongs to training.
  MemoryMetrics nested;
  tracker.Stop("eval", &nested);
  EXPECT_TRUE(nested.empty());
  probe.rss = 300;
  MemoryMetrics train;
  tracker.Stop("train", &train);
  EXPECT_THAT(train,
              ElementsAre(Pair("init_mem_cpu_alloc_delta", 0), Pair("init_mem_cpu_peaked_delta", 0),
                          Pair("train_mem_cpu_alloc_delta", 200),
                          Pair("train_mem_cpu_peaked_delta", 600), Pair("before_init_mem_cpu", 0)));
  MemoryMetrics never_started;
  tracker.Stop("test", &never_started);
  EXPECT_TRUE(never_started.empty());
}

TEST(MemoryTrackerTest, APeakThatCannotBeResetIsNotReported) {
  FixedProbe probe;
  probe.host_peak_resettable = false;
  MemoryTracker tracker(&probe);
  tracker.Start("eval");
  probe.rss = 4096;
  MemoryMetrics eval;
  tracker.Stop("eval", &eval);
  EXPECT_THAT(eval, ElementsAre(Pair("eval_mem_cpu_alloc_delta", 4096)));
}

// The kernel's own peak: 64 MiB touched and freed inside a stage shows as its peak above the
// end, and the resident set comes back down.
TEST(ProcessMemoryProbeTest, TheResidentPeakIsTheKernelsSinceTheReset) {
  ProcessMemoryProbe probe;
  EXPECT_FALSE(probe.HasDevice());
  if (!probe.ResetHostPeak()) {  // Some sandboxes refuse it: the peaks are then left out.
    GTEST_SKIP() << "/proc/self/clear_refs is not writable here";
  }
  const int64_t before = probe.HostResident();
  EXPECT_GT(before, 0);
  EXPECT_LE(probe.HostPeak() - before, 8 << 20);  // Reset to (about) the current set.
  constexpr size_t kBytes = size_t{64} << 20;
  char* block = static_cast<char*>(std::malloc(kBytes));  // Above mmap's threshold.
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  EXPECT_GE(probe.HostResident() - before, static_cast<int64_t>(kBytes) * 9 / 10);
  std::free(block);
  const int64_t after = probe.HostResident();
  EXPECT_LT(after - before, static_cast<int64_t>(kBytes) / 2);
  EXPECT_GE(probe.HostPeak() - after, static_cast<int64_t>(kBytes) * 9 / 10);
}

}  // namespace
}  // namespace lmtrain
