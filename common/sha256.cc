#include "common/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <vector>

#include "common/status_macros.h"

namespace lmtrain {

struct Sha256::Context {
  EVP_MD_CTX* ctx = nullptr;
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->ctx = EVP_MD_CTX_new();
  failed_ = context_->ctx == nullptr ||
            EVP_DigestInit_ex(context_->ctx, EVP_sha256(), /*impl=*/nullptr) != 1;
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(const void* data, size_t size) {
  if (failed_ || finished_ || size == 0) return;
  if (EVP_DigestUpdate(context_->ctx, data, size) != 1) failed_ = true;
}

absl::StatusOr<Sha256Digest> Sha256::Finish() {
  if (finished_) return absl::FailedPreconditionError("Sha256::Finish called twice");
  finished_ = true;
  Sha256Digest digest{};
  unsigned int length = 0;
  if (failed_ || EVP_DigestFinal_ex(context_->ctx, digest.data(), &length) != 1 ||
      length != digest.size()) {
    return absl::InternalError("OpenSSL SHA-256 failed");
  }
  return digest;
}

std::string DigestHex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return hex;
}

absl::StatusOr<Sha256Digest> Sha256Of(std::string_view bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.Finish();
}

absl::StatusOr<Sha256Digest> Sha256OfFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return absl::NotFoundError("cannot open " + path);
  Sha256 hash;
  std::vector<char> buffer(1 << 20);
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) hash.Update(buffer.data(), n);
  const bool bad = std::ferror(file) != 0;
  std::fclose(file);
  if (bad) return absl::DataLossError("error reading " + path);
  return hash.Finish();
}

}  // namespace lmtrain
