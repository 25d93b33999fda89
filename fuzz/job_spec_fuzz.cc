// Job files: YAML -> JobSpec (common/job_spec.h) as lm-server and lm-train parse them, a parsed
// spec's normalised YAML parsed again, `lmctl validate`'s checks on the same file, and, where
// the simple YAML reader takes the text, the same tree from it as from yaml-cpp's parser.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "client/job_validate.h"
#include "common/job_spec.h"
#include "fuzz/fuzz_files.h"
#include "tests/common/simple_yaml_check.h"

namespace lmtrain {
namespace {

void CheckRoundTrip(const JobSpec& spec, const ParseOptions& options) {
  const std::string yaml = JobSpecToYaml(spec);
  absl::StatusOr<JobSpec> again = ParseJobSpec(yaml, options);
  if (!again.ok()) {
    std::fprintf(stderr, "normalised YAML does not parse again: %s\n---\n%s\n",
                 again.status().ToString().c_str(), yaml.c_str());
    std::abort();
  }
}

void CheckSimpleReader(const std::string& yaml) {
  const std::string mismatch = test_util::SimpleYamlMismatch(yaml);
  if (mismatch.empty()) return;
  std::fprintf(stderr, "the simple YAML reader differs from yaml-cpp:\n%s---\n%s\n",
               mismatch.c_str(), yaml.c_str());
  std::abort();
}

}  // namespace
}  // namespace lmtrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  ParseOptions options;
  options.check_files = false;
  options.scheduled = size > 0 && (data[0] & 1);
  std::vector<std::string> warnings;
  absl::StatusOr<JobSpec> spec = ParseJobSpec(yaml, options, &warnings);
  if (spec.ok()) CheckRoundTrip(*spec, options);
  CheckSimpleReader(std::string(yaml));
  (void)ValidateJobFile(FuzzFile("job.yaml", yaml));
  return 0;
}
