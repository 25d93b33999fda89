#include "worker/trainer/gradient_sync.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "worker/trainer/data_parallel_group.h"

namespace lmtrain {

// Tells the sync that parameter `index` has its complete gradient for this backward.
class GradientSync::Hook : public torch::autograd::PostAccumulateGradHook {
 public:
  Hook(GradientSync* sync, size_t index) : sync_(sync), index_(index) {}
  void operator()(const torch::autograd::Variable& /*param*/) override {
    sync_->OnGradientReady(index_);
  }

 private:
  GradientSync* const sync_;
  const size_t index_;
};

GradientSync::GradientSync(const std::vector<torch::Tensor>& params, int64_t bucket_bytes,
                           c10::Device comm_device, StartAllReduce start)
    : params_(params.rbegin(), params.rend()),
      bucket_of_(params_.size()),
      done_(params_.size(), 0),
      comm_device_(comm_device),
      start_(std::move(start)) {
  const std::vector<size_t> starts = GradientBuckets(params_, bucket_bytes);
  for (size_t b = 0; b + 1 < starts.size(); ++b) {
    Bucket bucket;
    for (size_t i = starts[b]; i < starts[b + 1]; ++i) {
      bucket.members.push_back(i);
      bucket_of_[i] = b;
    }
    buckets_.push_back(std::move(bucket));
  }
}

GradientSync::~GradientSync() { Disarm(); }

void GradientSync::Arm() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::autograd::impl::set_post_acc_grad_hooks(params_[i], std::make_unique<Hook>(this, i));
  }
  armed_ = true;
}

void GradientSync::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!armed_) return;
  for (const torch::Tensor& p : params_) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
  armed_ = false;
}

void GradientSync::OnGradientReady(size_t param) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_ != nullptr) return;
  if (done_[param]) {
    // A second accumulation in the same backward (a layer recomputed and backpropagated on its
    // own, as reentrant gradient checkpointing does): the bucket may have left with a partial sum.
    if (bucket_of_[param] < next_) {
      error_ = std::make_exception_ptr(std::logic_error(
          "a gradient changed after its all-reduce started (overlapped gradient sync cannot "
          "be used with gradient checkpointing)"));
    }
    return;
  }
  done_[param] = 1;
  ++buckets_[bucket_of_[param]].ready;
  try {
    StartReadyLocked(/*all=*/false);
  } catch (...) {
    error_ = std::current_exception();  // Rethrown by Finish, on the training loop's thread.
  }
}

void GradientSync::StartReadyLocked(bool all) {
  torch::NoGradGuard no_grad;
  while (next_ < buckets_.size() &&
         (all || buckets_[next_].ready == buckets_[next_].members.size())) {
    Bucket& bucket = buckets_[next_];
    std::vector<torch::Tensor> flat;
    for (size_t i : bucket.members) {
      const torch::Tensor& p = params_[i];
      const torch::Tensor& g = p.grad();
      flat.push_back(g.defined() ? g.reshape({-1}) : torch::zeros({p.numel()}, p.options()));
    }
    bucket.flat = torch::cat(flat).to(comm_device_);
    bucket.work = start_(bucket.flat);
    ++next_;
  }
}

void GradientSync::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_ != nullptr) std::rethrow_exception(error_);
    StartReadyLocked(/*all=*/true);
  }
  Disarm();
  torch::NoGradGuard no_grad;
  for (Bucket& bucket : buckets_) {
    bucket.work->wait();
    torch::Tensor sums = bucket.flat.to(params_[bucket.members.front()].device());
    int64_t offset = 0;
    for (size_t i : bucket.members) {
      torch::Tensor p = params_[i];
      torch::Tensor reduced = sums.narrow(0, offset, p.numel()).view_as(p);
      offset += p.numel();
      if (p.grad().defined()) {
        p.mutable_grad().copy_(reduced);
      } else {
        p.mutable_grad() = reduced.clone();
      }
    }
  }
}

int GradientSync::buckets_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(next_);
}

}  // namespace lmtrain
