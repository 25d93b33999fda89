// lmctl's artifact commands: download (a job's checkpoint, verified against its manifest).
// Uploads happen inside submit (client/spec_uploader.h).
#include <iostream>

#include "artifacts/artifact_client.h"
#include "client/lmctl_command.h"
#include "client/output_format.h"

namespace lmtrain {
namespace {

int Download(CommandContext& c) {
  ArtifactClient artifacts(c.channels->NewChannel(), {});
  auto got = artifacts.DownloadCheckpoint(c.args[0], c.step, c.args[1]);
  if (!got.ok()) return FailWith(got.status());
  if (c.output != OutputFormat::kText) {
    std::cout << RenderDocument({{"job_id", c.args[0]},
                                 {"step", got->step},
                                 {"files", got->files},
                                 {"bytes", got->bytes},
                                 {"dir", c.args[1]},
                                 {"verified", got->verified}},
                                c.output);
    return 0;
  }
  std::cout << "job " << c.args[0] << " checkpoint-" << got->step << ": " << got->files
            << " files, " << got->bytes << " bytes in " << c.args[1]
            << (got->verified ? " (verified against manifest.json)" : " (no manifest.json)")
            << std::endl;
  return 0;
}

}  // namespace

std::vector<Command> ArtifactCommands() {
  return {
      {"download", 2, 2, "ID DIR [--step N]",
       "fetch the job's latest checkpoint (or step N) into DIR, verified against its manifest",
       Download},
  };
}

}  // namespace lmtrain
