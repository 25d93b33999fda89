// GradientSync in one process: a stand-in all-reduce that doubles a bucket (two identical
// ranks) records when each bucket starts, so the overlap with backward is observable.
#include "worker/trainer/gradient_sync.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace lmtrain {
namespace {

struct Recorder {
  std::atomic<bool> in_backward{false};
  int started_in_backward = 0;
  int started = 0;
  GradientSync::StartAllReduce Start() {
    return [this](torch::Tensor& t) {
      t.mul_(2);
      ++started;
      if (in_backward) ++started_in_backward;
      auto done =
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
      done->markCompleted(c10::IValue(std::vector<at::Tensor>{t}));
      return c10d::Work::create_from_future(done);
    };
  }
};

// Four 32x32 layers; one bucket per layer (weight + bias).
struct Net {
  std::vector<torch::nn::Linear> layers;
  std::vector<torch::Tensor> params;
  Net() {
    torch::manual_seed(5);
    for (int i = 0; i < 4; ++i) {
      layers.emplace_back(32, 32);
      for (const torch::Tensor& p : layers.back()->parameters()) params.push_back(p);
    }
  }
  torch::Tensor Loss(const torch::Tensor& x) {
    torch::Tensor h = x;
    for (auto& layer : layers) h = torch::tanh(layer->forward(h));
    return h.sum();
  }
  static constexpr int64_t kLayerBytes = (32 * 32 + 32) * 4;
};

std::vector<torch::Tensor> Grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params) grads.push_back(p.grad().clone());
  return grads;
}

TEST(GradientSyncTest, BucketsStartDuringBackwardAndTheSumsLand) {
  Net net;
  const torch::Tensor x = torch::randn({8, 32});
  net.Loss(x).backward();
  const std::vector<torch::Tensor> single = Grads(net.params);
  for (torch::Tensor& p : net.params) p.mutable_grad() = torch::Tensor();

  Recorder recorder;
  GradientSync sync(net.params, Net::kLayerBytes, torch::kCPU, recorder.Start());
  sync.Arm();
  recorder.in_backward = true;
  net.Loss(x).backward();
  recorder.in_backward = false;
  // Every layer's bucket completes inside backward: the last layers' first.
  EXPECT_EQ(recorder.started_in_backward, 4);
  sync.Finish();
  EXPECT_EQ(sync.buckets_started(), 4);
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_TRUE(torch::allclose(net.params[i].grad(), single[i] * 2)) << i;
  }
}

TEST(GradientSyncTest, UnarmedOrUnusedParametersAreSummedByFinish) {
  Net net;
  torch::Tensor unused = torch::ones({3}).requires_grad_();
  std::vector<torch::Tensor> params = net.params;
  params.push_back(unused);
  net.Loss(torch::randn({4, 32})).backward();
  const std::vector<torch::Tensor> single = Grads(net.params);
  Recorder recorder;
  GradientSync sync(params, Net::kLayerBytes, torch::kCPU, recorder.Start());
  sync.Finish();  // Never armed: Finish starts every bucket.
  EXPECT_EQ(recorder.started, sync.buckets_started());
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_TRUE(torch::allclose(net.params[i].grad(), single[i] * 2)) << i;
  }
  ASSERT_TRUE(unused.grad().defined());
  EXPECT_TRUE(torch::equal(unused.grad(), torch::zeros({3})));
}

TEST(GradientSyncTest, AGradientThatChangesAfterItsBucketLeftIsAnError) {
  Net net;
  const torch::Tensor x = torch::randn({4, 32});
  Recorder recorder;
  GradientSync sync(net.params, Net::kLayerBytes, torch::kCPU, recorder.Start());
  sync.Arm();
  net.Loss(x).backward();
  net.Loss(x).backward();  // Accumulates into gradients whose buckets already started.
  EXPECT_THROW(sync.Finish(), std::logic_error);
}

TEST(GradientSyncTest, HooksAreRemovedAfterFinish) {
  Net net;
  Recorder recorder;
  {
    GradientSync sync(net.params, Net::kLayerBytes, torch::kCPU, recorder.Start());
    sync.Arm();
    net.Loss(torch::randn({2, 32})).backward();
    sync.Finish();
  }
  const int before = recorder.started;
  net.Loss(torch::randn({2, 32})).backward();  // Would crash or count if a hook were left.
  EXPECT_EQ(recorder.started, before);
}

}  // namespace
}  // namespace lmtrain
