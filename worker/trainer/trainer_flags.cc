#include "worker/trainer/trainer_flags.h"

#include <functional>
#include <string_view>

#include "absl/strings/numbers.h"

namespace lmtrain {
namespace {

using Setter = std::function<bool(const std::string& value, TrainerFlags* flags)>;

struct FlagSpec {
  const char* name;
  const char* value_name;  // nullptr: a switch without a value.
  const char* help;
  Setter set;
};

bool SetInt(const std::string& value, int min, int* out) {
  return absl::SimpleAtoi(value, out) && *out >= min;
}

const std::vector<FlagSpec>& Table() {
  static const auto* table = new std::vector<FlagSpec>{
      {"--output-dir", "DIR", "where checkpoints, the final model and results go (required)",
       [](const std::string& v, TrainerFlags* f) {
         f->output_dir = v;
         return !v.empty();
       }},
      {"--events-fd", "N", "write trainer events (JSON lines) to this open file descriptor",
       [](const std::string& v, TrainerFlags* f) { return SetInt(v, 0, &f->events_fd); }},
      {"--threads", "N", "torch threads (default: the machine's cores)",
       [](const std::string& v, TrainerFlags* f) { return SetInt(v, 1, &f->threads); }},
      {"--help", nullptr, "print this help",
       [](const std::string&, TrainerFlags* f) { return f->help = true; }},
  };
  return *table;
}

const FlagSpec* Find(std::string_view name) {
  if (name == "-h") name = "--help";
  for (const FlagSpec& spec : Table()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

// Applies args[*i] (and its value, advancing *i) to `flags`.
absl::Status ApplyFlag(const std::vector<std::string>& args, size_t* i, TrainerFlags* flags) {
  const std::string& arg = args[*i];
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  const FlagSpec* spec = Find(name);
  if (spec == nullptr) return absl::InvalidArgumentError("unknown flag " + name);
  std::string value;
  if (spec->value_name != nullptr && eq != std::string::npos) {
    value = arg.substr(eq + 1);
  } else if (spec->value_name != nullptr) {
    if (++*i >= args.size()) return absl::InvalidArgumentError(name + " needs a value");
    value = args[*i];
  }
  if (!spec->set(value, flags)) {
    return absl::InvalidArgumentError("bad value for " + name + ": '" + value + "'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainerFlags> ParseTrainerFlags(const std::vector<std::string>& args) {
  TrainerFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 1 && arg[0] == '-') {
      absl::Status status = ApplyFlag(args, &i, &flags);
      if (!status.ok()) return status;
    } else if (flags.job_file.empty()) {
      flags.job_file = arg;
    } else {
      return absl::InvalidArgumentError("unexpected argument '" + arg + "'");
    }
  }
  if (flags.help) return flags;
  if (flags.job_file.empty()) return absl::InvalidArgumentError("missing JOB.yaml");
  if (flags.output_dir.empty()) return absl::InvalidArgumentError("missing --output-dir");
  return flags;
}

std::string TrainerUsage() {
  std::string usage = "usage: lm-train JOB.yaml --output-dir DIR [flags]\n";
  for (const FlagSpec& spec : Table()) {
    std::string lhs = std::string("  ") + spec.name;
    if (spec.value_name != nullptr) lhs += std::string(" ") + spec.value_name;
    lhs.resize(std::max<size_t>(lhs.size() + 2, 22), ' ');
    usage += lhs + spec.help + "\n";
  }
  return usage;
}

}  // namespace lmtrain
