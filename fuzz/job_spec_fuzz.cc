// Job files: YAML -> JobSpec (common/job_spec.h) as lm-server and lm-train parse them, a parsed
// spec's normalised YAML parsed again, and `lmctl validate`'s checks on the same file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "client/job_validate.h"
#include "common/job_spec.h"
#include "fuzz/fuzz_files.h"

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
  (void)ValidateJobFile(FuzzFile("job.yaml", yaml));
  return 0;
}
