// lm-server's HTTP JSON API (server/http/json_api.h): a request line "METHOD TARGET" (the target's
// query string split by cpp-httplib's own parser, as HttpServer does), then the body, against a
// fresh in-memory server holding job 1 (submitted by "alice", with a few events). The caller is
// chosen by the first byte: anonymous admin, alice, another user, or a worker.
#include <httplib.h>

#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "fuzz/fuzz_files.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/http/json_api.h"
#include "server/job_manager.h"
#include "server/scheduler/scheduler.h"
#include "storage/in_memory_job_store.h"

namespace lmtrain {
namespace {

constexpr std::string_view kJob =
    "name: fuzz\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
    "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n"
    "data:\n  train_file: train.txt\n  block_size: 8\n";

// A fresh server with job 1, so that every input runs against the same state.
struct FuzzServer {
  FuzzServer()
      : scheduler(scheduler::MakePolicyScheduler({})),
        dispatcher(&store, SystemClock::Get(), &hub, scheduler.get(),
                   Dispatcher::Options{FuzzDir() + "/artifacts", 10000}),
        manager(&store, SystemClock::Get(), &hub, &dispatcher),
        api(&manager, &dispatcher) {
    static const bool written = (FuzzFile("job/train.txt", "hello world\n"), true);
    (void)written;
    SubmitRequest request{std::string(kJob), "job.yaml", FuzzDir() + "/job", "", "alice"};
    if (!manager.Submit(request).ok()) std::abort();
  }
  InMemoryJobStore store;
  EventHub hub;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  Dispatcher dispatcher;
  JobManager manager;
  JsonApi api;
};

Principal Caller(uint8_t choice) {
  switch (choice % 4) {
    case 0: return Principal::AuthDisabled();
    case 1: return Principal{"alice", Role::kUser, true};
    case 2: return Principal{"bob", Role::kUser, true};
    default: return Principal{"w1", Role::kWorker, true};
  }
}

void Route(JsonApi& api, const Principal& caller, const std::string& method,
           const std::string& path, const QueryParams& query, const std::string& body) {
  static const std::regex kJobPath(R"(/api/v1/jobs/([^/]+)(/(metrics|events|logs|cancel))?)");
  std::smatch match;
  if (path == "/api/v1/jobs") {
    api.ListJobs(caller, query);
  } else if (path == "/api/v1/workers") {
    api.ListWorkers(caller);
  } else if (std::regex_match(path, match, kJobPath)) {
    const std::string id = match[1], what = match[3];
    if (what.empty()) api.GetJob(caller, id);
    if (what == "metrics") api.JobMetrics(caller, id, query);
    if (what == "events") api.JobEvents(caller, id, query);
    if (what == "logs") api.JobLogs(caller, id, query);
    if (what == "cancel" && method == "POST") api.CancelJob(caller, id, body);
  }
}

}  // namespace
}  // namespace lmtrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  if (size == 0 || size > 4096) return 0;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t line_end = std::min(input.find('\n'), input.size());
  const std::string line(input.substr(0, line_end));
  const std::string body(input.substr(std::min(line_end + 1, input.size())));
  const size_t space = line.find(' ');
  const std::string method = line.substr(0, space);
  const std::string target = space == std::string::npos ? "" : line.substr(space + 1);
  const size_t question = target.find('?');
  QueryParams query;
  if (question != std::string::npos) {
    httplib::detail::parse_query_text(target.substr(question + 1), query);
  }
  FuzzServer server;
  Route(server.api, Caller(data[0]), method, target.substr(0, question), query, body);
  return 0;
}
