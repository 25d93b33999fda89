// lmctl: the lmtrain command line.
//   lmctl [--server HOST:PORT] [--token T] [--tls-ca F [--tls-cert F --tls-key F]]
//         [--config FILE] submit FILE | list | get ID [-o json] | watch ID | cancel ID
//         | events ID [-f] [-o json] | download ID [--step N] DIR
//   submit uploads the files a job names unless --upload=never (client/spec_uploader.h).
// Connection settings: flags > $LMCTL_SERVER/$LMCTL_TOKEN/... > ~/.config/lmctl/config.yaml
// > defaults (127.0.0.1:50051, plaintext, no token); see client/lmctl_config.h.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "client/job_format.h"
#include "client/lmctl_config.h"
#include "client/spec_uploader.h"
#include "common/command_line.h"

namespace lmtrain {
namespace {

struct Context {
  JobClient* client;
  std::vector<std::string> args;  // After the command name.
  std::string output;             // "text" | "json"
  std::string request_id;
  bool logs = false;
  bool follow = false;
  int64_t limit = 100;
  const ClientChannelFactory* channels = nullptr;  // submit (uploads), download
  std::string upload = "auto";  // submit: auto | always | never
  bool no_upload = false;       // submit: same as --upload=never
  int64_t step = 0;             // download: 0 = latest checkpoint
};

int Fail(const absl::Status& s) {
  std::cerr << "lmctl: " << s.message() << "\n";
  return 1;
}

int Submit(Context& c) {
  auto mode = ParseUploadMode(c.no_upload ? "never" : c.upload);
  if (!mode.ok()) return Fail(mode.status());
  auto id = SubmitJobFile(*c.client, c.channels->target(), c.channels->NewChannel(), c.args[0], c.request_id, *mode, std::cerr);
  if (!id.ok()) return Fail(id.status());
  std::cerr << "submitted " << c.args[0] << " as job " << *id << "\n";
  std::cout << *id << std::endl;
  return 0;
}

int List(Context& c) {
  auto jobs = c.client->List(static_cast<int>(c.limit));
  if (!jobs.ok()) return Fail(jobs.status());
  if (c.output == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& job : *jobs) all.push_back(JobToJson(job));
    std::cout << all.dump(2) << std::endl;
  } else {
    std::cout << JobsToTable(*jobs);
  }
  return 0;
}

int Get(Context& c) {
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return Fail(job.status());
  std::cout << (c.output == "json" ? JobToJson(*job).dump(2) + "\n" : JobToText(*job));
  return 0;
}

int Watch(Context& c) {
  auto status = c.client->Watch(c.args[0], 0, [&](const v1::JobEvent& e) {
    const std::string line = EventToLine(e, c.logs);
    if (!line.empty()) std::cout << line << std::endl;
  });
  if (!status.ok()) return Fail(status);
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return Fail(job.status());
  std::cout << "job " << job->id() << " " << v1::JobState_Name(job->state());
  if (!job->error().empty()) std::cout << ": " << job->error();
  std::cout << std::endl;
  return job->state() == v1::SUCCEEDED ? 0 : 1;
}

// The job's event log from its first event, as a table or JSON lines; with -f, then live
// until the job ends. Exit 0 once the log (or, with -f, the job) has ended.
int Events(Context& c) {
  const bool json = c.output == "json";
  bool header_shown = json;  // The table's header comes with the first row, not before an error.
  auto status = c.client->Events(c.args[0], c.follow, [&](const v1::JobEvent& e) {
    if (!header_shown) std::cout << EventsTableHeader();
    header_shown = true;
    if (json) {
      std::cout << EventToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << std::endl;
    } else {
      std::cout << EventToRow(e) << std::flush;
    }
  });
  if (!status.ok()) return Fail(status);
  if (!header_shown) std::cout << EventsTableHeader();
  return 0;
}

int Cancel(Context& c) {
  auto state = c.client->Cancel(c.args[0]);
  if (!state.ok()) return Fail(state.status());
  std::cout << "job " << c.args[0] << " "
            << (*state == v1::RUNNING ? "cancelling" : v1::JobState_Name(*state)) << std::endl;
  return 0;
}

// Flags given (non-empty) override the environment, which overrides the config file.
absl::StatusOr<ClientChannelFactory> ConnectionFromSettings(
    const std::string& server, const std::string& token, const std::string& tls_ca,
    const std::string& tls_cert, const std::string& tls_key, const std::string& config) {
  auto given = [](const std::string& v) {
    return v.empty() ? std::nullopt : std::optional<std::string>(v);
  };
  const PartialLmctlSettings flags{given(server), given(token), given(tls_ca), given(tls_cert),
                                   given(tls_key)};
  const GetEnv getenv = [](const char* name) { return std::getenv(name); };
  const std::string path = config.empty() ? DefaultLmctlConfigPath(getenv) : config;
  PartialLmctlSettings file;
  if (!path.empty()) {
    auto loaded = LoadLmctlConfig(path, /*required=*/!config.empty());
    if (!loaded.ok()) return loaded.status();
    file = *loaded;
  }
  return ClientChannelFactory::Create(
      ResolveLmctlSettings(flags, LmctlSettingsFromEnv(getenv), file));
}

int Download(Context& c) {
  ArtifactClient artifacts(c.channels->NewChannel(), {});
  auto got = artifacts.DownloadCheckpoint(c.args[0], c.step, c.args[1]);
  if (!got.ok()) return Fail(got.status());
  std::cout << "job " << c.args[0] << " checkpoint-" << got->step << ": " << got->files
            << " files, " << got->bytes << " bytes in " << c.args[1]
            << (got->verified ? " (verified against manifest.json)" : " (no manifest.json)")
            << std::endl;
  return 0;
}

struct Command {
  size_t nargs;
  const char* usage;
  std::function<int(Context&)> run;
};

const std::map<std::string, Command>& Commands() {
  static const auto* commands = new std::map<std::string, Command>{
      {"submit", {1, "submit FILE      validate and submit a job file; prints the job id", Submit}},
      {"list", {0, "list             jobs, newest first", List}},
      {"get", {1, "get ID [-o json] one job", Get}},
      {"watch",
       {1, "watch ID         stream events until the job ends (exit 0 if SUCCEEDED)", Watch}},
      {"cancel", {1, "cancel ID        cancel a queued or running job", Cancel}},
      {"events",
       {1, "events ID [-f] [-o json]  the job's event log (-f: follow until it ends)", Events}},
      {"download",
       {2, "download ID [--step N] DIR  fetch a checkpoint (default: latest), verified", Download}},
  };
  return *commands;
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) {
  using namespace lmtrain;
  std::string server, token, tls_ca, tls_cert, tls_key, config;
  Context c{nullptr, {}, "text", "", false, false, 100};
  CommandLine cl("lmctl", "the lmtrain command line");
  cl.AddString("server", &server, "lm-server address (env LMCTL_SERVER; default 127.0.0.1:50051)");
  cl.AddString("token", &token, "bearer token (env LMCTL_TOKEN)");
  cl.AddString("tls-ca", &tls_ca, "PEM CA of the server's certificate; turns TLS on");
  cl.AddString("tls-cert", &tls_cert, "PEM client certificate for mutual TLS (with --tls-key)");
  cl.AddString("tls-key", &tls_key, "PEM private key of --tls-cert");
  cl.AddString("config", &config,
               "config file (env LMCTL_CONFIG; default ~/.config/lmctl/config.yaml)");
  cl.AddString("output", &c.output, "text | json (also -o)");
  cl.AddString("request-id", &c.request_id, "submit: idempotency key");
  cl.AddBool("logs", &c.logs, "watch: also print the trainer's log lines");
  cl.AddBool("follow", &c.follow, "events: follow live until the job ends (also -f)");
  cl.AddInt("limit", &c.limit, "list: at most this many jobs");
  cl.AddString("upload", &c.upload,
               "submit: upload the files a job names: auto (unless the server is loopback), "
               "always, never");
  cl.AddBool("no-upload", &c.no_upload, "submit: keep paths as they are (shared storage)");
  cl.AddInt("step", &c.step, "download: checkpoint step (default: latest)");
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::string& a : args) {
    if (a == "-o") a = "--output";
    if (a == "-f") a = "--follow";
  }
  auto positional = cl.Parse(args);
  std::string usage = cl.Usage() + "\nCommands:\n";
  for (const auto& [name, cmd] : Commands()) absl::StrAppend(&usage, "  ", cmd.usage, "\n");
  if (!positional.ok()) {
    std::cerr << (IsHelpRequest(positional.status()) ? usage
                                                     : std::string(positional.status().message()))
              << "\n";
    return IsHelpRequest(positional.status()) ? 0 : 2;
  }
  if (positional->empty() || !Commands().count(positional->front())) {
    std::cerr << usage;
    return 2;
  }
  const Command& cmd = Commands().at(positional->front());
  c.args.assign(positional->begin() + 1, positional->end());
  if (c.args.size() != cmd.nargs) {
    std::cerr << "usage: lmctl " << cmd.usage << "\n";
    return 2;
  }
  if (c.output != "text" && c.output != "json") {
    std::cerr << "lmctl: -o must be text or json (got '" << c.output << "')\n";
    return 2;
  }
  auto channels = ConnectionFromSettings(server, token, tls_ca, tls_cert, tls_key, config);
  if (!channels.ok()) return Fail(channels.status());
  JobClient client(channels->NewChannel());
  c.client = &client;
  c.channels = &*channels;
  return cmd.run(c);
}
