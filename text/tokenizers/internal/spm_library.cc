#include "text/tokenizers/internal/spm_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "text/tokenizers/internal/absl_view.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LMTRAIN_SPM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LMTRAIN_SPM_SANITIZED 1
#endif
#endif

namespace lmtrain::tokenizers_internal {
namespace {

// ASan and TSan refuse to dlopen() with RTLD_DEEPBIND (google/sanitizers#611), so sanitized
// builds (cmake/Sanitizers.cmake, which build no LibTorch and so hold one libprotobuf) load the
// shim without it.
#ifdef LMTRAIN_SPM_SANITIZED
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

std::string ExecutableDir() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  const std::string exe(buffer, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

template <typename Fn>
bool Bind(void* handle, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

// Fills `lib` from `handle`; returns the name of the first missing symbol, or
// "".
std::string BindAll(void* handle, SpmLibrary* lib) {
  std::string missing;
  Bind(handle, "lmtrain_spm_last_error", &lib->last_error, &missing);
  Bind(handle, "lmtrain_spm_free_buffer", &lib->free_buffer, &missing);
  Bind(handle, "lmtrain_spm_load", &lib->load, &missing);
  Bind(handle, "lmtrain_spm_free", &lib->free_model, &missing);
  Bind(handle, "lmtrain_spm_vocab_size", &lib->vocab_size, &missing);
  Bind(handle, "lmtrain_spm_encode", &lib->encode, &missing);
  Bind(handle, "lmtrain_spm_encode_with_spans", &lib->encode_with_spans, &missing);
  Bind(handle, "lmtrain_spm_decode", &lib->decode, &missing);
  Bind(handle, "lmtrain_spm_piece_to_id", &lib->piece_to_id, &missing);
  Bind(handle, "lmtrain_spm_id_to_piece", &lib->id_to_piece, &missing);
  Bind(handle, "lmtrain_spm_piece_kind", &lib->piece_kind, &missing);
  Bind(handle, "lmtrain_spm_special_id", &lib->special_id, &missing);
  Bind(handle, "lmtrain_spm_train", &lib->train, &missing);
  return missing;
}

// Opens one candidate; on failure returns nullptr and sets `why`.
std::unique_ptr<const SpmLibrary> TryOpen(const std::string& path, std::string* why) {
  void* handle = dlopen(path.c_str(), kDlopenFlags);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why = error != nullptr ? error : "dlopen failed";
    return nullptr;
  }
  decltype(&lmtrain_spm_abi_version) abi_version = nullptr;
  std::string missing;
  if (!Bind(handle, "lmtrain_spm_abi_version", &abi_version, &missing) ||
      abi_version() != LMTRAIN_SPM_ABI_VERSION) {
    *why = missing.empty() ? absl::StrCat("ABI version ", abi_version(), ", want ",
                                          LMTRAIN_SPM_ABI_VERSION, " (stale build?)")
                           : "not the lmtrain sentencepiece shim";
    dlclose(handle);
    return nullptr;
  }
  auto lib = std::make_unique<SpmLibrary>();
  missing = BindAll(handle, lib.get());
  if (!missing.empty()) {
    *why = absl::StrCat("missing symbol ", missing);
    dlclose(handle);
    return nullptr;
  }
  return lib;
}

}  // namespace

absl::Status SpmLibrary::Error(int rc, std::string_view context) const {
  const auto code = rc > 0 && rc <= static_cast<int>(absl::StatusCode::kUnauthenticated)
                        ? static_cast<absl::StatusCode>(rc)
                        : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat(AbslView(context), ": ", last_error()));
}

std::vector<std::string> SpmLibraryCandidates() {
  const char* env = std::getenv(kSpmLibraryEnv);
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> candidates;
  const std::string exe_dir = ExecutableDir();
  if (!exe_dir.empty()) candidates.push_back(absl::StrCat(exe_dir, "/../lib/", kSpmLibraryName));
  candidates.push_back(kSpmLibraryName);
  return candidates;
}

absl::StatusOr<std::unique_ptr<const SpmLibrary>> LoadSpmLibrary(
    const std::vector<std::string>& candidates) {
  std::vector<std::string> failures;
  for (const std::string& path : candidates) {
    std::string why;
    if (std::unique_ptr<const SpmLibrary> lib = TryOpen(path, &why)) return lib;
    failures.push_back(absl::StrCat(path, " (", why, ")"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot load the sentencepiece shim ", kSpmLibraryName,
                   "; tried: ", absl::StrJoin(failures, "; "),
                   ". Build the lmtrain_spm target, or set ", kSpmLibraryEnv, " to its path"));
}

absl::StatusOr<const SpmLibrary*> GetSpmLibrary() {
  // Loaded once and kept for the life of the process.
  static const auto* const library = [] {
    auto loaded = LoadSpmLibrary(SpmLibraryCandidates());
    return loaded.ok() ? new absl::StatusOr<const SpmLibrary*>(loaded->release())
                       : new absl::StatusOr<const SpmLibrary*>(loaded.status());
  }();
  return *library;
}

}  // namespace lmtrain::tokenizers_internal
