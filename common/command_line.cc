#include "common/command_line.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lmtrain {

CommandLine::CommandLine(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void CommandLine::AddString(const std::string& name, std::string* value,
                            const std::string& help) {
  flags_.push_back({name, help, *value, false, [value](const std::string& v) {
                      *value = v;
                      return absl::OkStatus();
                    }});
}

void CommandLine::AddInt(const std::string& name, int64_t* value, const std::string& help) {
  flags_.push_back({name, help, absl::StrCat(*value), false,
                    [value, name](const std::string& v) {
                      if (absl::SimpleAtoi(v, value)) return absl::OkStatus();
                      return absl::InvalidArgumentError(
                          absl::StrCat("--", name, ": expected an integer (got '", v, "')"));
                    }});
}

void CommandLine::AddDouble(const std::string& name, double* value, const std::string& help) {
  flags_.push_back({name, help, absl::StrCat(*value), false,
                    [value, name](const std::string& v) {
                      if (absl::SimpleAtod(v, value)) return absl::OkStatus();
                      return absl::InvalidArgumentError(
                          absl::StrCat("--", name, ": expected a number (got '", v, "')"));
                    }});
}

void CommandLine::AddBool(const std::string& name, bool* value, const std::string& help) {
  flags_.push_back({name, help, *value ? "true" : "false", true,
                    [value, name](const std::string& v) {
                      if (absl::SimpleAtob(v, value)) return absl::OkStatus();
                      return absl::InvalidArgumentError(
                          absl::StrCat("--", name, ": expected true or false (got '", v, "')"));
                    }});
}

const CommandLine::Flag* CommandLine::Find(const std::string& name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::string>> CommandLine::Parse(int argc, char** argv) {
  return Parse(std::vector<std::string>(argv, argv + argc));
}

absl::StatusOr<std::vector<std::string>> CommandLine::Parse(
    const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") return absl::CancelledError(Usage());
    if (a == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = Find(name);
    if (flag == nullptr && !has_value && name.rfind("no-", 0) == 0) {
      flag = Find(name.substr(3));
      if (flag != nullptr && flag->is_bool) {
        if (auto s = flag->set("false"); !s.ok()) return s;
        continue;
      }
      flag = nullptr;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, "\n\n", Usage()));
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("--", name, ": missing value"));
      }
    }
    if (auto s = flag->set(value); !s.ok()) return s;
  }
  return positional;
}

std::string CommandLine::Usage() const {
  std::string out = absl::StrCat(program_, ": ", summary_, "\n\nFlags:\n");
  for (const Flag& f : flags_) {
    absl::StrAppendFormat(&out, "  --%-22s %s (default: %s)\n", f.name, f.help,
                          f.default_text.empty() ? "\"\"" : f.default_text);
  }
  return out;
}

bool IsHelpRequest(const absl::Status& status) { return absl::IsCancelled(status); }

std::vector<std::pair<std::string, bool>> CommandLine::FlagNames() const {
  std::vector<std::pair<std::string, bool>> out;
  for (const Flag& f : flags_) out.emplace_back(f.name, !f.is_bool);
  return out;
}

}  // namespace lmtrain
