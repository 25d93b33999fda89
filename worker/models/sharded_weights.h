// Sharded HF checkpoints: an index file ({"metadata":{...},"weight_map":{"tensor":"shard"}},
// e.g. model.safetensors.index.json or pytorch_model.bin.index.json) naming the shard files
// that hold each tensor. The shard format is the caller's: a ShardReader reads one file.
// Thread-safe: free functions, no shared state.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

// Reads every tensor of one shard file.
using ShardReader =
    std::function<absl::StatusOr<std::map<std::string, torch::Tensor>>(const std::string& path)>;

// Reads the index at `index_path` and every shard it names (resolved next to the index, each
// read once with `read_shard`), merged by tensor name. InvalidArgument (naming the index or
// shard) for a malformed index, a shard name that is not a plain file name, a tensor stored in
// two shards, or a weight_map entry missing from its shard; shard errors as `read_shard` gives.
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadShardedWeights(
    const std::string& index_path, const ShardReader& read_shard);

}  // namespace lmtrain
