// Writing a dataset file: DatasetColumns serialised in the layout of
// internal/dataset_format.h, read back zero-copy by MappedDataset. Torch-free.
//
// A dataset file holds named columns (ragged int32 sequences, int64 and float64 scalars), the
// cache key it was built for, and two SHA-256 digests (metadata, payload). The writer is
// deterministic: the same key and columns give the same bytes.
// Thread-safe: the function keeps no state (two calls must not share a descriptor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "text/dataset_cache/dataset_columns.h"

namespace lmtrain {

// Version of the file layout; part of every cache key (cache_key.h), so a new layout never
// meets an old file.
inline constexpr uint32_t kDatasetFileVersion = 1;

// Writes the dataset file for `key` (at most 64 bytes) and `columns` to `fd`, an empty regular
// file opened for writing (and reading, if the caller maps it afterwards), then fsyncs it. The
// descriptor stays the caller's. `path` names the file in messages only.
// Errors: InvalidArgument for a bad key or column name (ValidateColumns); Internal naming
// `path` and the errno text when a write or fsync fails.
absl::Status WriteDatasetFile(int fd, const std::string& path, std::string_view key,
                              const DatasetColumns& columns);

}  // namespace lmtrain
