// lmctl's commands that need no server: validate.
#include <iostream>

#include "client/job_validate.h"
#include "client/lmctl_command.h"

namespace lmtrain {
namespace {

int Validate(CommandContext& c) {
  auto report = ValidateJobFile(c.args[0]);
  if (!report.ok()) return FailWith(report.status());
  std::cout << (c.output != OutputFormat::kText
                    ? RenderDocument(ValidationToJson(*report), c.output)
                    : ValidationToText(*report));
  return report->ok() ? 0 : 1;
}

}  // namespace

std::vector<Command> LocalCommands() {
  return {
      {"validate", 1, 1, "FILE",
       "dry run without a server: parse and check the job file and its data; estimate "
       "parameters, memory and step time",
       Validate},
  };
}

}  // namespace lmtrain
