// The shape of an lmctl command, and the command groups (one file each):
//   job_commands.cc      submit, list, get, cancel, retry, checkpoints
//   predict_command.cc   predict
//   stream_commands.cc   watch, events, logs
//   cluster_commands.cc  workers, explain
//   artifact_commands.cc download
//   local_commands.cc    validate (no server needed)
// lmctl_main.cc parses the global flags, picks the command and runs it. Commands write
// results to stdout and errors to stderr ("lmctl: what went wrong"), and return the exit
// code: 0 success, 1 failure (unknown job, server error, invalid file), 2 usage errors.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/job_client.h"
#include "client/output_format.h"
#include "proto/client_channel.h"

namespace lmtrain {

struct CommandContext {
  JobClient* client = nullptr;    // Connects lazily: local commands never touch it.
  std::vector<std::string> args;  // After the command name.
  OutputFormat output = OutputFormat::kText;
  std::string request_id;
  bool logs = false;
  bool follow = false;
  int64_t limit = 100;     // list: the page size.
  std::string page_token;  // list: the page to show ("" the first).
  bool all = false;        // list: follow page tokens to the last page.
  // list: "basic" | "full" | "" (basic for the table, full for -o json|yaml).
  std::string view;
  bool stdout_is_tty = false;  // watch: a live progress bar instead of lines.
  // Server address, TLS and token, for clients besides `client` (uploads, downloads).
  const ClientChannelFactory* channels = nullptr;
  std::string upload = "auto";  // submit: auto | always | never (client/spec_uploader.h)
  bool no_upload = false;       // submit: same as --upload=never
  int64_t step = 0;             // download, predict: 0 = the latest checkpoint
  // predict: exactly one of fill_mask and generate; the others unset (sentinels) unless given.
  std::string fill_mask;
  std::string generate;
  int64_t top_k = -1;
  int64_t max_new_tokens = 0;
  double temperature = 0;
  int64_t seed = std::numeric_limits<int64_t>::min();
};

struct Command {
  std::string name;
  size_t min_args = 0;
  size_t max_args = 0;
  std::string synopsis;  // Arguments and flags, e.g. "ID [-f] [-o json|yaml]".
  std::string summary;   // One line.
  std::function<int(CommandContext&)> run;
};

std::vector<Command> JobCommands();
std::vector<Command> StreamCommands();
std::vector<Command> ClusterCommands();
std::vector<Command> ArtifactCommands();
std::vector<Command> PredictCommands();
std::vector<Command> LocalCommands();

// Prints "lmctl: <message>" to stderr; returns 1.
int FailWith(const absl::Status& status);

}  // namespace lmtrain
