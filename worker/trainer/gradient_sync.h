// One step's gradient sum over the ranks of a data-parallel group, started while backward is
// still running, as PyTorch DDP's Reducer does it: the parameters are split into buckets of
// about `bucket_bytes` in reverse order (the order backward produces their gradients); a hook
// on each parameter fires when its gradient has been accumulated, and a bucket whose
// gradients are all complete is flattened and handed to an asynchronous all-reduce, so the
// communication of the last layers overlaps the backward of the first. Buckets start strictly
// in bucket order on every rank (c10d matches collectives by the order they are issued), so a
// bucket waits for the ones before it even when it is ready first.
//
//   GradientSync sync(params, bytes, comm_device, start);
//   sync.Arm();              // before the backward that completes the gradients
//   loss.backward();         // buckets start as their gradients complete
//   sync.Finish();           // the rest start (missing gradients count as zeros); all waited for
//                            // and the sums written into each parameter's .grad
//
// Without Arm (or when this rank's backward never ran), Finish starts every bucket itself: the
// sums are the same. A bucket is communicated on `comm_device` (the CPU for Gloo, the GPU for
// NCCL) and copied back to the parameters' device.
// Thread safety: the hooks run on autograd's threads; Arm, Finish and the destructor on the
// training loop's thread, not concurrently with a backward that uses these parameters.
// A parameter's gradient must be accumulated once per armed backward: a second accumulation
// after its bucket started (reentrant gradient checkpointing does that) makes Finish throw
// std::logic_error rather than sum a partial gradient; do not Arm with gradient checkpointing.
// Errors: Finish rethrows the first c10d error (c10::Error) of a bucket started by a hook.
#pragma once

#include <torch/torch.h>

#include <exception>
#include <functional>
#include <mutex>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace lmtrain {

class GradientSync {
 public:
  // Starts the in-place sum over ranks of a flat tensor; the returned work completes it.
  using StartAllReduce = std::function<c10::intrusive_ptr<c10d::Work>(torch::Tensor&)>;

  GradientSync(const std::vector<torch::Tensor>& params, int64_t bucket_bytes,
               c10::Device comm_device, StartAllReduce start);
  ~GradientSync();  // Removes the hooks.
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Installs the post-accumulate-grad hooks (replacing any other such hook of the parameters).
  void Arm();
  // Starts the buckets not yet started, waits for all, writes the sums into .grad (defining the
  // gradients a parameter lacked) and removes the hooks.
  void Finish();

  // Buckets started so far (by hooks or Finish): for tests.
  int buckets_started() const;

 private:
  struct Bucket {
    std::vector<size_t> members;  // Indices into params_.
    size_t ready = 0;             // Members whose gradient is complete.
    torch::Tensor flat;           // On comm_device_ once started.
    c10::intrusive_ptr<c10d::Work> work;
  };
  class Hook;

  void OnGradientReady(size_t param);
  // Starts buckets in order while the next one is complete (all of them when `all`).
  void StartReadyLocked(bool all);
  void Disarm();

  std::vector<torch::Tensor> params_;
  std::vector<size_t> bucket_of_;  // Parameter index -> bucket.
  std::vector<char> done_;         // Parameter index -> its hook has fired.
  std::vector<Bucket> buckets_;
  const c10::Device comm_device_;
  const StartAllReduce start_;
  mutable std::mutex mu_;
  size_t next_ = 0;  // The next bucket to start.
  bool armed_ = false;
  std::exception_ptr error_;  // From a bucket a hook started.
};

}  // namespace lmtrain
