// The safetensors file format (huggingface/safetensors), read and written byte-compatibly.
//
// Layout: u64 little-endian header length N; N bytes of JSON, space-padded to a multiple of 8:
//   {"__metadata__":{"format":"pt"},"name":{"dtype":"F32","shape":[2,3],"data_offsets":[b,e]},..}
// then the raw little-endian tensor data, offsets relative to the end of the header. The data
// section is exactly the concatenation of the tensors, in header order, without gaps.
//
// Supported dtypes: BOOL, U8, I8, I16, F16, BF16, I32, F32, F64, I64. (U16/U32/U64 and the F8
// types have no LibTorch 1.13 equivalent and are rejected with InvalidArgument.)
// Thread-safe: free functions, no shared state. Little-endian hosts only.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/models/safetensors_header.h"  // kMaxSafetensorsHeaderBytes

namespace lmtrain {

// Reads every tensor of `path` into freshly allocated CPU tensors (dtype and shape as stored).
// `metadata` (optional) receives the "__metadata__" string map.
// Errors, each naming the file: NotFound / PermissionDenied (open), InvalidArgument for any
// malformed content: file shorter than 8 bytes, header length past the end of the file or above
// kMaxSafetensorsHeaderBytes, header not a JSON object, a tensor entry without a valid
// dtype/shape/data_offsets, offsets not covering the data section exactly (out of range,
// overlapping, gaps, trailing bytes), a byte span that is not numel x element size, an
// unknown or unsupported dtype. Never crashes on hostile input: every size is checked before
// allocating or reading.
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensors(
    const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// Writes `tensors` to `path` (created or truncated) exactly as safetensors' `serialize_to_file`
// does: entries ordered by descending dtype size class (the crate's Dtype order), then by name,
// which is plain name order for a single-dtype model; "__metadata__" first when `metadata` is
// non-empty (HF requires {"format":"pt"}); compact JSON padded with spaces to a multiple of 8.
// Tensors may live on any device and need not be contiguous; they are copied to CPU as needed.
// InvalidArgument: duplicate or invalid-UTF-8 names, unsupported dtype. Internal/errno codes
// for I/O failures, naming the file. Not atomic: write to a temp path and rename for that.
absl::Status WriteSafetensors(const std::string& path,
                              const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata);

// Reads a sharded checkpoint from its index (`model.safetensors.index.json`:
// {"metadata":{...},"weight_map":{"tensor name":"shard file name"}}). Shards are resolved next
// to the index and read once each. InvalidArgument (naming the index or shard) for a malformed
// index, a shard name that is not a plain file name, a tensor stored in two shards, or a
// weight_map entry missing from its shard; shard read errors as in ReadSafetensors.
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensorsIndex(
    const std::string& index_path);

}  // namespace lmtrain
