#include "server/scheduler_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/yaml_document.h"

namespace lmtrain {
namespace {

template <typename T>
absl::Status Read(const std::string& source, const YAML::Node& node, const std::string& key,
                  T* out) {
  try {
    *out = node.as<T>();
    return absl::OkStatus();
  } catch (const YAML::Exception&) {
    return YamlError(source, node,
               absl::StrCat(key, " has the wrong type (got '",
                            node.IsScalar() ? node.Scalar() : "a collection", "')"));
  }
}

absl::StatusOr<scheduler::UserPolicy> ReadUser(const std::string& source, const YAML::Node& node,
                                               const std::string& path) {
  if (!node.IsMap()) return YamlError(source, node, absl::StrCat(path, " must be a mapping"));
  scheduler::UserPolicy policy;
  for (const auto& kv : node) {
    ASSIGN_OR_RETURN(const std::string key, YamlKey(source, kv.first));
    const std::string where = absl::StrCat(path, ".", key);
    if (key == "weight") {
      if (auto s = Read(source, kv.second, where, &policy.weight); !s.ok()) return s;
      if (!(policy.weight > 0)) return YamlError(source, kv.second, where + " must be > 0");
    } else if (key == "max_running_jobs") {
      if (auto s = Read(source, kv.second, where, &policy.max_running_jobs); !s.ok()) return s;
      if (policy.max_running_jobs < 0) return YamlError(source, kv.second, where + " must be >= 0");
    } else if (key == "max_gpus") {
      if (auto s = Read(source, kv.second, where, &policy.max_gpus); !s.ok()) return s;
      if (policy.max_gpus < 0) return YamlError(source, kv.second, where + " must be >= 0");
    } else if (key == "max_queued_jobs") {
      if (auto s = Read(source, kv.second, where, &policy.max_queued_jobs); !s.ok()) return s;
      if (policy.max_queued_jobs < 0) return YamlError(source, kv.second, where + " must be >= 0");
    } else {
      return YamlError(source, kv.first,
                 absl::StrCat("unknown key '", where,
                              "' (known: weight, max_running_jobs, max_gpus, max_queued_jobs)"));
    }
  }
  return policy;
}

absl::Status ReadTop(const std::string& source, const YAML::Node& key_node, const YAML::Node& value,
                     SchedulerConfig* config) {
  ASSIGN_OR_RETURN(const std::string key, YamlKey(source, key_node));
  scheduler::SchedulerOptions& o = config->options;
  if (key == "seed") return Read(source, value, key, &o.seed);
  if (key == "backfill") return Read(source, value, key, &o.backfill);
  if (key == "preemption") return Read(source, value, key, &o.preemption);
  if (key == "gpu_share_weight") {
    if (auto s = Read(source, value, key, &o.gpu_share_weight); !s.ok()) return s;
    if (!(o.gpu_share_weight >= 0)) return YamlError(source, value, key + " must be >= 0");
    return absl::OkStatus();
  }
  if (key == "min_runtime_before_preemption_seconds") {
    double seconds = 0;
    if (auto s = Read(source, value, key, &seconds); !s.ok()) return s;
    // NaN, infinities and values past what milliseconds in an int64_t hold are refused too.
    constexpr double kMaxSeconds = 1e9;  // About 31 years.
    if (!(seconds >= 0 && seconds <= kMaxSeconds)) {
      return YamlError(source, value, key + " must be from 0 to 1e9 seconds");
    }
    o.min_runtime_before_preemption_ms = static_cast<int64_t>(seconds * 1000);
    return absl::OkStatus();
  }
  if (key == "max_jobs_examined") {
    if (auto s = Read(source, value, key, &o.max_jobs_examined); !s.ok()) return s;
    if (o.max_jobs_examined < 0) return YamlError(source, value, key + " must be >= 0");
    return absl::OkStatus();
  }
  if (key == "complete_pass_interval_ms") {
    int64_t& ms = config->complete_pass_interval_ms;
    if (auto s = Read(source, value, key, &ms); !s.ok()) return s;
    if (ms < 0) return YamlError(source, value, key + " must be >= 0");
    return absl::OkStatus();
  }
  if (key == "default_user") {
    auto policy = ReadUser(source, value, key);
    if (!policy.ok()) return policy.status();
    config->default_user = *policy;
    return absl::OkStatus();
  }
  if (key == "users") {
    if (!value.IsMap()) return YamlError(source, value, "users must be a mapping of user name to policy");
    for (const auto& kv : value) {
      ASSIGN_OR_RETURN(const std::string name, YamlKey(source, kv.first));
      auto policy = ReadUser(source, kv.second, "users." + name);
      if (!policy.ok()) return policy.status();
      config->users[name] = *policy;
    }
    return absl::OkStatus();
  }
  return YamlError(source, key_node,
             absl::StrCat("unknown key '", key,
                          "' (known: seed, backfill, preemption, gpu_share_weight, "
                          "min_runtime_before_preemption_seconds, max_jobs_examined, "
                          "complete_pass_interval_ms, default_user, users)"));
}

}  // namespace

absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(const std::string& text,
                                                     const std::string& source) {
  ASSIGN_OR_RETURN(YAML::Node root, ParseYamlDocument(text, source));
  SchedulerConfig config;
  if (root.IsNull()) return config;
  if (!root.IsMap()) return YamlError(source, root, "the scheduler config must be a mapping");
  for (const auto& kv : root) {
    if (auto s = ReadTop(source, kv.first, kv.second, &config); !s.ok()) return s;
  }
  return config;
}

absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read scheduler config ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseSchedulerConfig(text.str(), path);
}

}  // namespace lmtrain
