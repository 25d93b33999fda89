// Gradient checkpointing of one layer: torch.utils.checkpoint.checkpoint (its reentrant form,
// preserve_rng_state=True), which Hugging Face's gradient_checkpointing_enable() wraps around
// every transformer layer. LibTorch has no C++ counterpart; this is a custom
// torch::autograd::Function.
//
// The forward runs the layer with grad disabled and saves only the layer's inputs; the backward
// runs the layer again, with grad enabled, on detached copies of those inputs, and
// backpropagates the incoming gradient through the recomputed graph. Parameter gradients
// accumulate into the parameters' .grad during that inner backward; input gradients are
// returned to the outer graph. Memory for a layer's activations is held only while that layer's
// backward runs, at the price of one more forward per layer.
//
// Exactness: the state of the default generator of the layer's device (the CPU's, or the CUDA
// device's) from before the forward is restored around the recomputation (and the caller's state
// put back afterwards), so dropout draws the same masks; that device's autocast state of the
// forward is replayed too. Loss and gradients therefore equal
// those of an uncheckpointed run up to the summation order of shared-parameter gradients.
//
// Limits (as torch's reentrant checkpoint): gradients reach parameters only through
// Tensor::backward() / torch::autograd::backward(), not torch::autograd::grad(); no double
// backward; the layer must not modify its inputs in place, must be deterministic given the RNG
// and autocast state, and must draw random numbers only from its device's default generator. Autocast's weight-cast cache is bypassed inside
// checkpointed layers (a cast made under no-grad must not be reused by code that needs its
// gradient).
//
// Thread safety: as the layer's; the RNG swap holds the default generator's mutex while it
// reads or replaces the state, but draws by other threads between those points would shift the
// masks, so one thread drives a model (as everywhere in worker/models).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace lmtrain::internal {

// One layer as a function of its tensor inputs (undefined ones passed as undefined), returning
// one tensor. Captured state (the module) is kept alive until the backward has run.
using CheckpointedLayer = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// layer(inputs), checkpointed. Inputs may be undefined, non-float, or not require grad (masks,
// position biases): those get no gradient. When grad mode is off, or no input requires grad (so
// the output would carry no graph and parameter gradients would be lost), this simply calls
// layer(inputs). Exceptions from the layer (c10::Error) propagate from the forward, or from
// backward() when the recomputation throws.
torch::Tensor RunCheckpointed(const CheckpointedLayer& layer,
                              const std::vector<torch::Tensor>& inputs);

}  // namespace lmtrain::internal
