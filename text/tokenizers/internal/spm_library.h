// Run-time loading of liblmtrain_spm.so (text/spm/), the C-ABI shim over
// sentencepiece.
//
// The shim is dlopen()ed with RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND so that
// sentencepiece's private protobuf copy binds to itself and never meets the
// process's libprotobuf (LibTorch, gRPC). It is never linked directly. Sanitizer builds load it
// without RTLD_DEEPBIND, which ASan and TSan do not support.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "text/spm/spm_shim.h"

namespace lmtrain::tokenizers_internal {

// Environment variable naming the shim's path; overrides the default search.
inline constexpr char kSpmLibraryEnv[] = "LMTRAIN_SPM_LIBRARY";
inline constexpr char kSpmLibraryName[] = "liblmtrain_spm.so";

// The shim's entry points (see spm_shim.h for their contracts). Immutable once
// loaded; shared by all threads. The library they point into stays loaded until
// the process exits (never dlclose()d).
struct SpmLibrary {
  // Status for a shim return code `rc` != 0: the code, then "`context`: <last
  // error>".
  absl::Status Error(int rc, std::string_view context) const;

  // Typed from the shim's own declarations, so a signature change cannot go
  // unnoticed.
  decltype(&lmtrain_spm_last_error) last_error;
  decltype(&lmtrain_spm_free_buffer) free_buffer;
  decltype(&lmtrain_spm_load) load;
  decltype(&lmtrain_spm_free) free_model;
  decltype(&lmtrain_spm_vocab_size) vocab_size;
  decltype(&lmtrain_spm_encode) encode;
  decltype(&lmtrain_spm_encode_with_spans) encode_with_spans;
  decltype(&lmtrain_spm_decode) decode;
  decltype(&lmtrain_spm_piece_to_id) piece_to_id;
  decltype(&lmtrain_spm_id_to_piece) id_to_piece;
  decltype(&lmtrain_spm_piece_kind) piece_kind;
  decltype(&lmtrain_spm_special_id) special_id;
  decltype(&lmtrain_spm_train) train;
};

// Where the shim is looked for: $LMTRAIN_SPM_LIBRARY alone when set; else
// <directory of /proc/self/exe>/../lib/liblmtrain_spm.so, then the bare name
// (the dynamic linker's search path).
std::vector<std::string> SpmLibraryCandidates();

// Loads the first candidate that opens and checks its LMTRAIN_SPM_ABI_VERSION.
// On failure, FailedPrecondition listing every path tried with dlopen's reason.
// Each call dlopen()s afresh; the caller owns the entry points (the library itself
// stays loaded).
absl::StatusOr<std::unique_ptr<const SpmLibrary>> LoadSpmLibrary(
    const std::vector<std::string>& candidates);

// The process's shim: LoadSpmLibrary(SpmLibraryCandidates()) on the first call,
// that result (success or error) afterwards. Thread-safe.
absl::StatusOr<const SpmLibrary*> GetSpmLibrary();

}  // namespace lmtrain::tokenizers_internal
