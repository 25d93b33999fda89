// TuneMallocForServer: memory freed at the top of the heap stays with the process.
#include "common/malloc_tuning.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace lmtrain {
namespace {

TEST(MallocTuningTest, ServerSettingsKeepFreedHeapMemory) {
  ASSERT_TRUE(TuneMallocForServer());
  // 64 blocks of 64 KiB (heap-served: below the mmap threshold), freed newest first, so that
  // they merge into the top of the heap, which glibc would trim past 128 KiB by default.
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(std::malloc(64 << 10));
    std::memset(blocks.back(), 1, 64 << 10);
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
  EXPECT_GE(mallinfo2().keepcost, size_t{4} << 20) << "freed heap memory went back to the kernel";
}

}  // namespace
}  // namespace lmtrain
