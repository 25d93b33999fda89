// Sha256: incremental SHA-256 (OpenSSL's EVP interface, which uses the CPU's SHA extensions when
// present). Torch-free.
//
// Lifecycle:   Sha256() ─► Update()* ─► Finish() ─► (spent: Update/Finish give FailedPrecondition)
//
// Not thread-safe: one instance per thread. Move-only (owns an EVP_MD_CTX).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  // Cannot fail: an OpenSSL failure (out of memory) is remembered and reported by Finish.
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Adds `size` bytes at `data` (may be null when size is 0).
  void Update(const void* data, size_t size);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }

  // The digest of everything added. Internal when OpenSSL failed; FailedPrecondition when
  // called twice.
  absl::StatusOr<Sha256Digest> Finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
  bool failed_ = false;
  bool finished_ = false;
};

// Lower-case hex of `digest` (64 characters).
std::string DigestHex(const Sha256Digest& digest);

// SHA-256 of `bytes` in one call (Internal only when OpenSSL fails).
absl::StatusOr<Sha256Digest> Sha256Of(std::string_view bytes);

// SHA-256 of a file's contents, read in 1 MiB chunks. NotFound when it cannot be opened,
// DataLoss when reading fails; both name the file.
absl::StatusOr<Sha256Digest> Sha256OfFile(const std::string& path);

}  // namespace lmtrain
