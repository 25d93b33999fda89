// GPU discovery without a GPU: lm-worker's --gpus parser, the declared inventory, and the NVML
// loader on machines without the library (or with a library that is not NVML). The _CUDA test
// lists a real machine's GPUs and is skipped where NVML cannot be loaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "worker/agent/gpu_inventory.h"
#include "worker/agent/nvml_gpu_inventory.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseGpuListTest, NoneAndIndices) {
  EXPECT_THAT(*ParseGpuList("none"), IsEmpty());
  EXPECT_THAT(*ParseGpuList(""), IsEmpty());
  EXPECT_THAT(*ParseGpuList("0"), ElementsAre(0));
  EXPECT_THAT(*ParseGpuList("3,0,1"), ElementsAre(0, 1, 3));
}

TEST(ParseGpuListTest, RejectsBadValuesNamingTheFlag) {
  for (const char* bad : {"a", "0,,1", "-1", "1.5", "all"}) {
    absl::StatusOr<std::vector<int>> parsed = ParseGpuList(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--gpus: expected 'none' or GPU indices"));
  }
  EXPECT_EQ(ParseGpuList("0,1,0").status().message(), "--gpus: GPU 0 is listed twice");
}

TEST(NvmlGpuInventoryTest, MissingLibraryMeansNoGpus) {
  NvmlGpuInventory nvml("libnvidia-ml-not-installed.so.1");
  absl::StatusOr<std::vector<GpuDevice>> listed = nvml.List();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(listed.status().message(), HasSubstr("cannot load libnvidia-ml-not-installed.so.1"));
  EXPECT_FALSE(nvml.List().ok());  // Asking again is harmless.
}

TEST(NvmlGpuInventoryTest, LibraryWithoutNvmlFunctionsIsRefused) {
  NvmlGpuInventory not_nvml("libc.so.6");
  absl::StatusOr<std::vector<GpuDevice>> listed = not_nvml.List();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(listed.status().message(), HasSubstr("libc.so.6 has no nvmlInit_v2"));
}

class FixedInventory : public GpuInventory {
 public:
  absl::StatusOr<std::vector<GpuDevice>> List() override {
    return std::vector<GpuDevice>{{1, "NVIDIA H100", 80LL << 30, "GPU-1234"}};
  }
};

TEST(DeclaredGpuInventoryTest, PlaceholderNamesWithoutNvml) {
  NvmlGpuInventory nvml("libnvidia-ml-not-installed.so.1");
  DeclaredGpuInventory declared({0, 1}, &nvml);
  absl::StatusOr<std::vector<GpuDevice>> listed = declared.List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].index, 0);
  EXPECT_EQ((*listed)[0].name, "GPU 0 (declared)");
  EXPECT_EQ((*listed)[1].name, "GPU 1 (declared)");
  EXPECT_EQ((*listed)[1].uuid, "");
}

TEST(DeclaredGpuInventoryTest, KnownIndicesKeepTheirDetails) {
  FixedInventory fixed;
  DeclaredGpuInventory declared({1, 2}, &fixed);
  absl::StatusOr<std::vector<GpuDevice>> listed = declared.List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].name, "NVIDIA H100");
  EXPECT_EQ((*listed)[0].uuid, "GPU-1234");
  EXPECT_EQ((*listed)[1].name, "GPU 2 (declared)");
  EXPECT_THAT(*DeclaredGpuInventory({}, &fixed).List(), IsEmpty());
}

TEST(NvmlGpuInventoryTest, ListsTheMachinesGpus_CUDA) {
  NvmlGpuInventory nvml;
  absl::StatusOr<std::vector<GpuDevice>> listed = nvml.List();
  if (absl::IsNotFound(listed.status())) GTEST_SKIP() << listed.status();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_FALSE(listed->empty());
  for (size_t i = 0; i < listed->size(); ++i) {
    const GpuDevice& gpu = (*listed)[i];
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_FALSE(gpu.name.empty());
    EXPECT_GT(gpu.memory_bytes, 0);
    EXPECT_THAT(gpu.uuid, ::testing::StartsWith("GPU-"));
    std::cout << "GPU " << gpu.index << ": " << gpu.name << ", " << gpu.memory_bytes
              << " bytes, " << gpu.uuid << "\n";
  }
}

}  // namespace
}  // namespace lmtrain
