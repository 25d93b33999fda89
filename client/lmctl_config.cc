#include "client/lmctl_config.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/yaml_document.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

// The table of keys: config key, environment variable, field.
struct Key {
  const char* config;
  const char* env;
  std::optional<std::string> PartialLmctlSettings::*field;
  bool is_path;
};
constexpr Key kKeys[] = {
    {"server", "LMCTL_SERVER", &PartialLmctlSettings::server, false},
    {"token", "LMCTL_TOKEN", &PartialLmctlSettings::token, false},
    {"tls_ca", "LMCTL_TLS_CA", &PartialLmctlSettings::tls_ca, true},
    {"tls_cert", "LMCTL_TLS_CERT", &PartialLmctlSettings::tls_cert, true},
    {"tls_key", "LMCTL_TLS_KEY", &PartialLmctlSettings::tls_key, true},
};

const Key* FindKey(const std::string& name) {
  for (const Key& k : kKeys) {
    if (name == k.config) return &k;
  }
  return nullptr;
}

std::string Pick(const std::optional<std::string>& flag, const std::optional<std::string>& env,
                 const std::optional<std::string>& file, const std::string& fallback) {
  if (flag.has_value()) return *flag;
  if (env.has_value()) return *env;
  if (file.has_value()) return *file;
  return fallback;
}

}  // namespace

absl::StatusOr<PartialLmctlSettings> ParseLmctlConfig(const std::string& text,
                                                      const std::string& source) {
  ASSIGN_OR_RETURN(YAML::Node root, ParseYamlDocument(text, source));
  PartialLmctlSettings settings;
  if (root.IsNull()) return settings;
  if (!root.IsMap()) return YamlError(source, root, "the lmctl config must be a mapping");
  const fs::path dir = fs::absolute(source).parent_path();
  for (const auto& kv : root) {
    ASSIGN_OR_RETURN(const std::string name, YamlKey(source, kv.first));
    const Key* key = FindKey(name);
    if (key == nullptr) {
      return YamlError(source, kv.first,
                 absl::StrCat("unknown key '", name,
                              "' (known: server, token, tls_ca, tls_cert, tls_key)"));
    }
    if (!kv.second.IsScalar()) return YamlError(source, kv.second, name + " must be a string");
    std::string value = kv.second.Scalar();
    if (key->is_path && !value.empty() && fs::path(value).is_relative()) {
      value = (dir / value).lexically_normal().string();
    }
    settings.*(key->field) = value;
  }
  return settings;
}

absl::StatusOr<PartialLmctlSettings> LoadLmctlConfig(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (!required) return PartialLmctlSettings{};
    return absl::NotFoundError(absl::StrCat("cannot read lmctl config ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseLmctlConfig(text.str(), path);
}

std::string DefaultLmctlConfigPath(const GetEnv& getenv) {
  if (const char* explicit_path = getenv("LMCTL_CONFIG"); explicit_path && *explicit_path) {
    return explicit_path;
  }
  if (const char* xdg = getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    return absl::StrCat(xdg, "/lmctl/config.yaml");
  }
  if (const char* home = getenv("HOME"); home && *home) {
    return absl::StrCat(home, "/.config/lmctl/config.yaml");
  }
  return "";
}

PartialLmctlSettings LmctlSettingsFromEnv(const GetEnv& getenv) {
  PartialLmctlSettings settings;
  for (const Key& k : kKeys) {
    if (const char* value = getenv(k.env); value != nullptr) settings.*(k.field) = value;
  }
  return settings;
}

ClientChannelOptions ResolveLmctlSettings(const PartialLmctlSettings& flags,
                                          const PartialLmctlSettings& env,
                                          const PartialLmctlSettings& file) {
  ClientChannelOptions o;
  o.target = Pick(flags.server, env.server, file.server, o.target);
  o.token = Pick(flags.token, env.token, file.token, "");
  o.tls_ca = Pick(flags.tls_ca, env.tls_ca, file.tls_ca, "");
  o.tls_cert = Pick(flags.tls_cert, env.tls_cert, file.tls_cert, "");
  o.tls_key = Pick(flags.tls_key, env.tls_key, file.tls_key, "");
  return o;
}

}  // namespace lmtrain
