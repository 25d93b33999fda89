#include "common/internal/optim_args_field.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace lmtrain::internal {
namespace {

constexpr char kOptimArgsPath[] = "training.optim_args";

struct OptimDoubleArg {
  const char* key;
  std::optional<double> OptimArgs::*member;
};
struct OptimBoolArg {
  const char* key;
  std::optional<bool> OptimArgs::*member;
};
const OptimDoubleArg kOptimDoubleArgs[] = {
    {"momentum", &OptimArgs::momentum}, {"dampening", &OptimArgs::dampening},
    {"lr_decay", &OptimArgs::lr_decay}, {"eps", &OptimArgs::eps},
    {"alpha", &OptimArgs::alpha},
};
const OptimBoolArg kOptimBoolArgs[] = {
    {"nesterov", &OptimArgs::nesterov},
    {"centered", &OptimArgs::centered},
};

// HF's parameter groups override an optimizer's weight_decay: the key would do nothing there.
void RefuseWeightDecay(YamlReader& r, const std::string& path) {
  r.ReportAt(path, absl::StrCat(path,
                                " is not read (HF's parameter groups set it): use "
                                "training.weight_decay"));
}

const std::vector<std::string_view>& OptimArgKeys() {
  static const auto* keys = [] {
    auto* k = new std::vector<std::string_view>;
    for (const OptimDoubleArg& a : kOptimDoubleArgs) k->push_back(a.key);
    for (const OptimBoolArg& a : kOptimBoolArgs) k->push_back(a.key);
    k->push_back("weight_decay");  // Known, to say where it belongs.
    return k;
  }();
  return *keys;
}

// One key's value given as text (HF's string form): a number, or a boolean for the flags.
void ReadOptimArgText(YamlReader& r, const std::string& key, const std::string& text,
                      const std::string& path, OptimArgs& out) {
  if (key == "weight_decay") return RefuseWeightDecay(r, path);
  for (const OptimBoolArg& a : kOptimBoolArgs) {
    if (key != a.key) continue;
    const std::string lower = absl::AsciiStrToLower(text);
    if (lower == "true" || lower == "1" || lower == "yes") {
      out.*a.member = true;
    } else if (lower == "false" || lower == "0" || lower == "no") {
      out.*a.member = false;
    } else {
      r.ReportAt(path, absl::StrCat(path, " must be true or false (got '", text, "')"));
    }
    return;
  }
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) ||
      !Range::AtLeast(0).Contains(value)) {
    r.ReportAt(path, absl::StrCat(path, " must be a number >= 0 (got '", text, "')"));
    return;
  }
  for (const OptimDoubleArg& a : kOptimDoubleArgs) {
    if (key == a.key) out.*a.member = value;
  }
}

// One key's value given as a YAML scalar (the mapping form).
void ReadOptimArgNode(YamlReader& r, const std::string& key, const YamlNode& v,
                      const std::string& path, OptimArgs& out) {
  for (const OptimBoolArg& a : kOptimBoolArgs) {
    if (key != a.key) continue;
    if (auto x = r.ReadBool(v, path)) out.*a.member = *x;
    return;
  }
  std::optional<double> x = r.ReadDouble(v, path, Range::AtLeast(0));
  for (const OptimDoubleArg& a : kOptimDoubleArgs) {
    if (key == a.key && x) out.*a.member = *x;
  }
}

void ReadOptimArgString(YamlReader& r, const std::string& text, OptimArgs& out) {
  const std::string compact = absl::StrReplaceAll(text, {{" ", ""}});
  std::vector<std::string> seen;
  for (absl::string_view pair : absl::StrSplit(compact, ',', absl::SkipEmpty())) {
    const std::vector<std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      r.ReportAt(kOptimArgsPath,
                 absl::StrCat(kOptimArgsPath, " must be key=value pairs separated by commas (got '",
                              std::string(pair), "')"));
      continue;
    }
    const std::string& key = kv[0];
    if (std::find(OptimArgKeys().begin(), OptimArgKeys().end(), key) == OptimArgKeys().end()) {
      const std::string close = ClosestMatch(key, OptimArgKeys());
      r.ReportAt(kOptimArgsPath,
                 absl::StrCat(kOptimArgsPath, ": unknown key '", key, "'",
                              close.empty() ? "" : absl::StrCat(" (did you mean '", close, "'?)"),
                              "; known: ", JoinNames(OptimArgKeys())));
    } else if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      r.ReportAt(kOptimArgsPath, absl::StrCat(kOptimArgsPath, ": '", key, "' is given twice"));
    } else {
      seen.push_back(key);
      ReadOptimArgText(r, key, kv[1], JoinPath(kOptimArgsPath, key), out);
    }
  }
}

}  // namespace

Field<TrainingSpec> OptimArgsField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec& out) {
    out.optim_args = OptimArgs();
    if (v.IsNull()) return;
    if (v.IsScalar()) {
      if (auto text = r.ReadString(v, path)) ReadOptimArgString(r, *text, out.optim_args);
      return;
    }
    r.VisitMapping(v, path, OptimArgKeys(),
                   [&](const std::string& key, const YamlNode& value, const std::string& child) {
                     if (key == "weight_decay") {
                       RefuseWeightDecay(r, child);
                     } else {
                       ReadOptimArgNode(r, key, value, child, out.optim_args);
                     }
                   });
  };
  auto write = [](YamlOut& e, const TrainingSpec& s) {
    e << YAML::BeginMap;
    for (const OptimDoubleArg& a : kOptimDoubleArgs) {
      if (s.optim_args.*a.member) {
        e << YAML::Key << a.key << YAML::Value << FormatDouble(*(s.optim_args.*a.member));
      }
    }
    for (const OptimBoolArg& a : kOptimBoolArgs) {
      if (s.optim_args.*a.member) {
        e << YAML::Key << a.key << YAML::Value << (*(s.optim_args.*a.member) ? "true" : "false");
      }
    }
    e << YAML::EndMap;
  };
  return {"optim_args", read, write};
}

Field<TrainingSpec> IncludeNumInputTokensSeenField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec& out) {
    std::optional<std::string> x = r.ReadString(v, path);
    if (!x) return;
    if (*x == "all" || *x == "non_padding" || *x == "no") {
      out.include_num_input_tokens_seen = *x;
    } else if (std::optional<bool> flag = ParseYamlBool(*x)) {
      out.include_num_input_tokens_seen = *flag ? "all" : "no";
    } else {
      r.ReportAt(
          path,
          absl::StrCat(path, " must be one of all, non_padding, no, true, false (got '", *x, "')"));
    }
  };
  auto write = [](YamlOut& e, const TrainingSpec& s) { e << s.include_num_input_tokens_seen; };
  return {"include_num_input_tokens_seen", read, write};
}

void CheckOptimArgs(YamlReader& r, const TrainingSpec& t) {
  const OptimArgs& a = t.optim_args;
  struct Key {
    const char* key;
    bool set;
    std::vector<std::string_view> optims;
  };
  const Key keys[] = {
      {"momentum", a.momentum.has_value(), {"sgd", "rmsprop"}},
      {"dampening", a.dampening.has_value(), {"sgd"}},
      {"nesterov", a.nesterov.has_value(), {"sgd"}},
      {"lr_decay", a.lr_decay.has_value(), {"adagrad"}},
      {"eps", a.eps.has_value(), {"adagrad", "rmsprop"}},
      {"alpha", a.alpha.has_value(), {"rmsprop"}},
      {"centered", a.centered.has_value(), {"rmsprop"}},
  };
  for (const Key& key : keys) {
    if (!key.set || std::find(key.optims.begin(), key.optims.end(), t.optim) != key.optims.end()) {
      continue;
    }
    const std::string path = JoinPath(kOptimArgsPath, key.key);
    r.ReportAt(path, absl::StrCat(path, " applies to optim ", JoinNames(key.optims), ", not to '",
                                  t.optim, "'"));
  }
  if (t.optim == "sgd" && a.nesterov.value_or(false) &&
      (a.momentum.value_or(0) <= 0 || a.dampening.value_or(0) != 0)) {
    const std::string path = JoinPath(kOptimArgsPath, "nesterov");
    r.ReportAt(path, absl::StrCat(path, " needs momentum > 0 and dampening 0 (torch's SGD)"));
  }
}

}  // namespace lmtrain::internal
