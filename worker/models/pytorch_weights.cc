#include "worker/models/pytorch_weights.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "worker/models/internal/pickle_globals.h"
#include "worker/models/sharded_weights.h"

namespace lmtrain {
namespace {

// torch.save names the pickle "data.pkl" and the storages "data/<key>" inside the archive.
constexpr char kPickleRecord[] = "data.pkl";
constexpr char kStoragePrefix[] = "data/";

absl::StatusOr<std::map<std::string, torch::Tensor>> TensorsOf(c10::IValue value,
                                                               const std::string& path) {
  // (state dict, its attributes): what CheckStateDictPickle makes of BUILD.
  if (value.isTuple() && value.toTupleRef().elements().size() == 2) {
    value = value.toTupleRef().elements()[0];
  }
  if (!value.isGenericDict()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": holds a ", value.tagKind(), ", not a state dict (name -> tensor)"));
  }
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": state dict entry ", entry.key().isString() ? entry.key().toStringRef() : "?",
          " is not a name -> tensor pair"));
    }
    // Clone: a tensor may be a view of a storage shared with others (tied weights).
    tensors.emplace(entry.key().toStringRef(), entry.value().toTensor().clone());
  }
  return tensors;
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadArchive(const std::string& path) {
  caffe2::serialize::PyTorchStreamReader reader(path);
  if (!reader.hasRecord(kPickleRecord)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the archive has no ", kPickleRecord, " (not written by torch.save)"));
  }
  auto [data, size] = reader.getRecord(kPickleRecord);
  ASSIGN_OR_RETURN(const std::string pickle,
                   internal::CheckStateDictPickle(
                       absl::string_view(static_cast<const char*>(data.get()), size), path));
  size_t offset = 0;
  auto read_pickle = [&](char* buffer, size_t n) {
    n = std::min(n, pickle.size() - offset);
    std::memcpy(buffer, pickle.data() + offset, n);
    offset += n;
    return n;
  };
  auto read_storage = [&](const std::string& key) {
    return std::get<0>(reader.getRecord(absl::StrCat(kStoragePrefix, key)));
  };
  torch::jit::Unpickler unpickler(read_pickle, /*type_resolver=*/nullptr, /*obj_loader=*/nullptr,
                                  read_storage, torch::Device(torch::kCPU));
  return TensorsOf(unpickler.parse_ivalue(), path);
}

absl::Status NotReadable(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(path,
                   ": not a readable torch.save zip archive (files from torch < 1.6 must be "
                   "re-saved with a current torch): ",
                   why));
}

}  // namespace

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadPytorchWeights(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat(path, ": weights file not found"));
  }
  try {
    return ReadArchive(path);
  } catch (const c10::Error& e) {  // From the zip reader or the unpickler.
    return NotReadable(path, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return NotReadable(path, e.what());
  }
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadPytorchWeightsIndex(
    const std::string& index_path) {
  return ReadShardedWeights(index_path,
                            [](const std::string& shard) { return ReadPytorchWeights(shard); });
}

}  // namespace lmtrain
