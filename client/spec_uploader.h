// What `lmctl submit` does with the local files a job names (data files, GLUE data_dir,
// tokenizer, pretrained model folder): upload them to lm-server's artifact store and rewrite
// the spec's paths to artifact:sha256:<hex> references, so that a worker that cannot see the
// submitting machine's disks fetches them (docs/operations.md, "Artifact store").
//
//   file                          -> artifact:sha256:<file hash>
//   folder                        -> artifact:sha256:<folder manifest hash>
//   tokenizer .../vocab.json      -> artifact:sha256:<manifest of vocab.json +
//   merges.txt>/vocab.json
//
// Files the server already has are not sent again (StatArtifact first); an upload cut short
// continues from the bytes the server kept on the next submit.
// Upload modes: always, never (paths stay as they are: storage the workers share), auto
// (upload unless the server address is loopback: a local server's workers see our files).
// Thread-safe: pure functions over their arguments.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "artifacts/artifact_client.h"
#include "client/job_client.h"
#include "common/job_spec.h"

namespace lmtrain {

enum class UploadMode { kAuto, kAlways, kNever };

// "auto" | "always" | "never"; InvalidArgument otherwise.
absl::StatusOr<UploadMode> ParseUploadMode(const std::string& text);

// True for 127.x.y.z, localhost, [::1] / ::1 and unix: targets.
bool IsLoopbackTarget(const std::string& target);

// Uploads every local path of `spec` (absolute, as ParseJobSpec leaves them) and returns the
// spec with artifact references in their place. Writes one progress line per path to `log`.
absl::StatusOr<JobSpec> UploadJobInputs(JobSpec spec, ArtifactClient& client, std::ostream& log);

// lmctl submit: validates `job_file`, uploads its inputs when `mode` says so (against the
// server at `target`, over `channel`), submits; returns the job id.
absl::StatusOr<std::string> SubmitJobFile(JobClient& jobs, const std::string& target,
                                          std::shared_ptr<grpc::Channel> channel,
                                          const std::string& job_file,
                                          const std::string& request_id, UploadMode mode,
                                          std::ostream& log);

}  // namespace lmtrain
