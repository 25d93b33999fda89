// The operations lm-bench-api runs (see api_bench_main.cc for the command line): each is one
// client's closed-loop call against a JobService, built by MakeFactory from the flags.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/api_load.h"
#include "lmtrain/v1/jobs.grpc.pb.h"

namespace lmtrain::bench {

// lm-bench-api's flags (their meaning: api_bench_main.cc's Main).
struct ApiBenchFlags {
  std::string server = "127.0.0.1:50051";
  std::string op = "get";
  int64_t clients = 1;
  double seconds = 5;
  double rate = 0;  // > 0: open loop at this many calls per second in total.
  int64_t seed_jobs = 100;
  int64_t list_limit = 20;
  std::string sync;  // "": use --server.
  bool fake_worker = false;
  bool ceiling = false;
  std::string ceiling_api = "sync";  // sync | callback: the do-nothing service's gRPC API.
  int64_t watchers = 1000;  // watch-fanout.
  int64_t events = 20;
  int64_t interval_ms = 100;
  int64_t watch_channels = 8;
  int64_t list_pages = 1;
  std::string list_states;         // Comma-separated JobState names; "": all.
  std::string list_view = "full";  // basic | full
  int64_t prefill = 100000;
  bool prefill_all_queued = false;
  std::string data_dir;
  std::string store;
  int64_t server_pid = 0;  // > 0: report that process's CPU per call.
  double slow_log_ms = 0;  // > 0: print each call slower than this (api_load.h SlowCall).
};

// A folder holding train.txt and the text of a tiny valid job file that reads it.
struct JobFiles {
  std::filesystem::path dir;
  std::string yaml;
};

// Creates a fresh JobFiles folder under the temp dir (the caller removes it).
JobFiles MakeJobFiles();

// A stub on its own channel per client: distinct channel args keep gRPC from sharing one
// connection.
std::unique_ptr<v1::JobService::Stub> NewStub(const std::string& server, int client);

// The operation named by f.op (submit, get, list, watch, submit-to-running) against f.server.
// get and watch first seed f.seed_jobs finished jobs, whose ids go to *ids (which, like f and
// files, must outlive the factory). InvalidArgument for an unknown op.
absl::StatusOr<OperationFactory> MakeFactory(const ApiBenchFlags& f, const JobFiles* files,
                                             std::vector<std::string>* ids);

}  // namespace lmtrain::bench
