#include "common/tls_files.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(what, " ", path, ": cannot read file"));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, ": not a PEM file (no '-----BEGIN' line)"));
  }
  return text.str();
}

absl::StatusOr<TlsPem> ReadTlsFiles(const TlsFilePaths& paths, const std::string& flag_prefix) {
  if (paths.cert.empty() != paths.key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag_prefix, "cert and ", flag_prefix, "key must be given together"));
  }
  TlsPem pem;
  if (!paths.cert.empty()) {
    ASSIGN_OR_RETURN(pem.cert, ReadPemFile(paths.cert, flag_prefix + "cert"));
    ASSIGN_OR_RETURN(pem.key, ReadPemFile(paths.key, flag_prefix + "key"));
  }
  if (!paths.ca.empty()) {
    ASSIGN_OR_RETURN(pem.ca, ReadPemFile(paths.ca, flag_prefix + "ca"));
  }
  return pem;
}

}  // namespace lmtrain
