#include "worker/trainer/data_parallel_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/worker/trainer/free_port.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing_child::FreePort;

DistributedEnv Env(int rank, int port) {
  DistributedEnv env;
  env.rank = rank;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.timeout = std::chrono::seconds(20);
  return env;
}

TEST(GradientBucketsTest, SplitsByBytesAndDtype) {
  const std::vector<torch::Tensor> params = {torch::zeros({10}), torch::zeros({10}),
                                             torch::zeros({30}), torch::zeros({5}, torch::kFloat64),
                                             torch::zeros({2})};
  // 40 bytes + 40 fit in 100; 120 is a bucket of its own; a dtype change starts one.
  EXPECT_THAT(GradientBuckets(params, 100), ElementsAre(0, 2, 3, 4, 5));
  EXPECT_THAT(GradientBuckets(params, 1 << 20), ElementsAre(0, 3, 4, 5));
}

// Two ranks as two threads of this process, over loopback.
TEST(DataParallelGroupTest, SumsGradientsValuesAndBroadcasts) {
  const int port = FreePort();
  auto rank_main = [port](int rank) {
    auto group = ConnectDataParallelGroup(Env(rank, port));
    EXPECT_TRUE(group.ok()) << group.status();
    if (!group.ok()) return std::vector<double>();
    torch::Tensor a = torch::full({3}, rank + 1.0).requires_grad_();
    torch::Tensor b = torch::full({2, 2}, 10.0 * (rank + 1)).requires_grad_();
    a.mutable_grad() = a.detach().clone();
    // b has no gradient on rank 0: zeros.
    if (rank == 1) b.mutable_grad() = b.detach().clone();
    EXPECT_TRUE((*group)->SumGradients({a, b}).ok());
    EXPECT_TRUE((*group)->BroadcastFromRoot({a}).ok());
    EXPECT_TRUE((*group)->WaitForAll().ok());
    auto sums = (*group)->SumValues({rank + 0.5, 1.0});
    EXPECT_TRUE(sums.ok());
    std::vector<double> out = {a.grad()[0].item<double>(), b.grad()[1][1].item<double>(),
                               a[0].item<double>()};
    if (sums.ok()) out.insert(out.end(), sums->begin(), sums->end());
    return out;
  };
  auto other = std::async(std::launch::async, rank_main, 1);
  const std::vector<double> root = rank_main(0);
  EXPECT_THAT(root, ElementsAre(3.0, 20.0, 1.0, 2.0, 2.0));
  EXPECT_THAT(other.get(), ElementsAre(3.0, 20.0, 1.0, 2.0, 2.0));
}

TEST(DataParallelGroupTest, RendezvousWithoutPeersIsUnavailable) {
  DistributedEnv env = Env(0, FreePort());
  env.timeout = std::chrono::seconds(1);
  auto group = ConnectDataParallelGroup(env);
  EXPECT_TRUE(absl::IsUnavailable(group.status())) << group.status();
  EXPECT_THAT(std::string(group.status().message()), HasSubstr("rendezvous at 127.0.0.1:"));
}

}  // namespace
}  // namespace lmtrain
