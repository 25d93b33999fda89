#include "server/auth/token_file.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/yaml_document.h"

namespace lmtrain {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool ParseHexDigest(const std::string& hex, Sha256Digest* out) {
  if (hex.size() != 2 * out->size()) return false;
  for (size_t i = 0; i < out->size(); ++i) {
    const int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

// One list item: {user, role, token | token_sha256}.
absl::StatusOr<TokenEntry> ReadEntry(const std::string& source, const YAML::Node& node) {
  if (!node.IsMap()) {
    return YamlError(source, node, "each entry must be a mapping {user, role, token_sha256 | token}");
  }
  TokenEntry entry;
  entry.line = YamlLine(node);
  entry.principal.authenticated = true;
  std::string role, token, token_sha256;
  bool has_token = false, has_sha = false;
  for (const auto& kv : node) {
    ASSIGN_OR_RETURN(const std::string key, YamlKey(source, kv.first));
    if (!kv.second.IsScalar()) return YamlError(source, kv.second, key + " must be a string");
    const std::string value = kv.second.Scalar();
    if (key == "user") {
      entry.principal.user = value;
    } else if (key == "role") {
      role = value;
      if (!ParseRole(value, &entry.principal.role)) {
        return YamlError(source, kv.second,
                   absl::StrCat("role must be one of user, admin, worker (got '", value, "')"));
      }
    } else if (key == "token") {
      token = value;
      has_token = true;
    } else if (key == "token_sha256") {
      token_sha256 = value;
      has_sha = true;
    } else {
      return YamlError(source, kv.first,
                 absl::StrCat("unknown key '", key, "' (known: user, role, token, token_sha256)"));
    }
  }
  if (entry.principal.user.empty()) return YamlError(source, node, "entry has no user");
  if (role.empty())
    return YamlError(source, node, "entry for '" + entry.principal.user + "' has no role");
  if (has_token == has_sha) {
    return YamlError(source, node,
               absl::StrCat("entry for '", entry.principal.user,
                            "' needs exactly one of token_sha256 (preferred) or token"));
  }
  if (has_token) {
    if (token.size() < 16) {
      return YamlError(source, node,
                 absl::StrCat("token for '", entry.principal.user,
                              "' is shorter than 16 characters; use e.g. `openssl rand -hex 32`"));
    }
    absl::StatusOr<Sha256Digest> digest = Sha256Of(token);
    if (!digest.ok()) return digest.status();
    entry.token_sha256 = *digest;
  } else if (!ParseHexDigest(token_sha256, &entry.token_sha256)) {
    return YamlError(source, node,
               absl::StrCat("token_sha256 for '", entry.principal.user,
                            "' must be 64 hex digits (got ", token_sha256.size(), " characters)"));
  }
  return entry;
}

}  // namespace

bool ParseRole(const std::string& name, Role* role) {
  static const auto* roles = new std::map<std::string, Role>{
      {"user", Role::kUser}, {"admin", Role::kAdmin}, {"worker", Role::kWorker}};
  auto it = roles->find(name);
  if (it == roles->end()) return false;
  *role = it->second;
  return true;
}

absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(const std::string& text,
                                                       const std::string& source) {
  ASSIGN_OR_RETURN(YAML::Node root, ParseYamlDocument(text, source));
  if (!root.IsSequence() || root.size() == 0) {
    return YamlError(source, root,
               "the tokens file must be a non-empty list of {user, role, token_sha256 | token}");
  }
  std::vector<TokenEntry> entries;
  std::map<Sha256Digest, int> seen;  // digest -> line
  for (const YAML::Node& node : root) {
    absl::StatusOr<TokenEntry> entry = ReadEntry(source, node);
    if (!entry.ok()) return entry.status();
    auto [it, inserted] = seen.emplace(entry->token_sha256, entry->line);
    if (!inserted) {
      return YamlError(source, node,
                 absl::StrCat("the same token is already listed at line ", it->second));
    }
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseTokenFile(text.str(), path);
}

}  // namespace lmtrain
