// lm-server's command line: its flags, their checks, and the Server::Options and embedded
// worker settings they make. main() parses, starts the Server and, for --local-worker N, a
// LocalWorker; this keeps the flags testable without starting anything.
//
//   ServerFlags flags;
//   CommandLine cl("lm-server", "...");
//   AddServerFlags(&cl, &flags);
//   cl.Parse(...);  then  RETURN_IF_ERROR(FinishServerFlags(&flags));  // flags.options ready.
//
// Not thread-safe: one parse on main's thread.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/command_line.h"
#include "server/server.h"

namespace lmtrain {

struct ServerFlags {
  ServerFlags();  // Server::Options' defaults, with the dashboard on 127.0.0.1:8080.

  // What most flags set directly; FinishServerFlags fills in the rest from the fields below.
  Server::Options options;
  // --local-worker: slots of an embedded worker (0: none) and its artifact cache's bound.
  int64_t local_workers = 0;
  int64_t local_cache_max_bytes = 0;
  // --exit-on-lease-loss: exit with status 3 on losing the lease (main sets
  // options.on_lease_lost) instead of standing by again.
  bool exit_on_lease_loss = false;

  // Raw values that FinishServerFlags checks and converts into `options`.
  std::string sync = "normal";
  int64_t sqlite_read_connections = 0;
  int64_t max_request_bytes = 0;
  std::string data_roots;        // DIR,...
  std::string scheduler_config;  // A YAML file, or "".
};

// Adds every lm-server flag to `cl`, each writing into `flags` (which must outlive `cl`'s Parse).
// $LMTRAIN_STORE, when set, is the default of --store.
void AddServerFlags(CommandLine* cl, ServerFlags* flags);

// After a successful Parse: checks the values and sets the remaining fields of flags->options
// (durability, reader connections, data roots as absolute paths, the scheduler config read from
// its file). InvalidArgument naming the flag (or the config file's own error) otherwise.
absl::Status FinishServerFlags(ServerFlags* flags);

// A warning for main to print, or "": bearer tokens on a non-loopback address without TLS.
std::string CleartextTokensWarning(const Server::Options& options);

}  // namespace lmtrain
