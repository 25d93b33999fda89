#include "worker/models/sharded_weights.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/models/json_file.h"

namespace lmtrain {
namespace {

// Groups the index's weight_map by shard file, rejecting names that could escape the folder.
absl::StatusOr<std::map<std::string, std::vector<std::string>>> ShardsOf(
    const nlohmann::json& index, const std::string& index_path) {
  auto weight_map = index.find("weight_map");  // end() for non-objects too.
  if (weight_map == index.end() || !weight_map->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(index_path, ": \"weight_map\" must be an object {tensor: shard file}"));
  }
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto& [name, shard] : weight_map->items()) {
    const std::string file = shard.is_string() ? shard.get<std::string>() : "";
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(index_path, ": weight_map[\"", name,
                                                     "\"] must be a plain file name (got ",
                                                     shard.dump(), ")"));
    }
    shards[file].push_back(name);
  }
  return shards;
}

}  // namespace

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadShardedWeights(
    const std::string& index_path, const ShardReader& read_shard) {
  ASSIGN_OR_RETURN(nlohmann::json index, ReadJsonFile(index_path));
  ASSIGN_OR_RETURN(auto shards, ShardsOf(index, index_path));
  const std::filesystem::path dir = std::filesystem::path(index_path).parent_path();
  std::map<std::string, torch::Tensor> merged;
  for (const auto& [shard, names] : shards) {
    const std::string shard_path = (dir / shard).string();
    ASSIGN_OR_RETURN(auto tensors, read_shard(shard_path));
    for (const std::string& name : names) {
      if (tensors.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(index_path, ": weight_map puts '", name,
                                                       "' in ", shard, ", which lacks it"));
      }
    }
    for (auto& [name, tensor] : tensors) {
      if (!merged.emplace(name, std::move(tensor)).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(shard_path, ": tensor '", name, "' is also stored in another shard"));
      }
    }
  }
  return merged;
}

}  // namespace lmtrain
