// TFRecord files: the record framing TensorBoard event files use, and an append-only
// writer. Torch-free.
//
// One record on disk:
//   uint64 length (little-endian) | uint32 MaskCrc32c(Crc32c(length's 8 bytes))
//   | length bytes of data | uint32 MaskCrc32c(Crc32c(data))
//
// TfRecordWriter lifecycle:
//   Create() ─► Write()* ─► Close() (or destruction, which closes without reporting)
// A Write that fails part-way may leave a torn last record (TensorBoard's reader stops
// there); later Writes are still attempted (the caller decides whether to stop).
// Not thread-safe: one writing thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain::tensorboard {

// The framed bytes of one record holding `data`.
std::string FrameTfRecord(std::string_view data);

class TfRecordWriter {
 public:
  // Creates `path` (mode 0644); the file must not exist yet. AlreadyExists when it does;
  // Internal with the path and errno text for other failures.
  static absl::StatusOr<std::unique_ptr<TfRecordWriter>> Create(const std::string& path);
  ~TfRecordWriter();
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one framed record with a single write(2) (retried on EINTR and short writes), so
  // a reader sees it as soon as Write returns: nothing is buffered in this process.
  // Internal naming the path on failure; FailedPrecondition after Close.
  absl::Status Write(std::string_view data);
  // Closes the file. Internal naming the path when close(2) reports an error.
  absl::Status Close();

  const std::string& path() const { return path_; }

 private:
  TfRecordWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  const std::string path_;
  int fd_;  // -1 once closed.
};

}  // namespace lmtrain::tensorboard
