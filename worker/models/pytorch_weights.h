// PyTorch's own weight files, as HF transformers wrote them before safetensors: pytorch_model.bin
// (torch.save of a state dict: a zip archive holding data.pkl and one record per storage) and
// the sharded pytorch_model-0000N-of-0000M.bin with pytorch_model.bin.index.json.
//
// A pickle can call any Python function, so data.pkl is checked opcode by opcode before it is
// read (internal/pickle_globals.h): only state dicts of tensors load; anything that imports
// another global is refused and never unpickled. Thread-safe: free functions, no shared state.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

// Every tensor of the state dict in `path`, as freshly read CPU tensors (dtype and shape as
// saved). Errors, each naming the file: NotFound when it does not exist; InvalidArgument when it
// is not a torch.save zip archive (the pre-1.6 legacy format included: re-save it with a current
// torch), when its pickle imports anything but tensors, storages and OrderedDict, or when the
// pickle is not a dict of name -> tensor.
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadPytorchWeights(const std::string& path);

// A sharded checkpoint from its pytorch_model.bin.index.json, each shard read as above; index
// errors as ReadShardedWeights (sharded_weights.h).
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadPytorchWeightsIndex(
    const std::string& index_path);

}  // namespace lmtrain
