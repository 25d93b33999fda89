// lmctl: the lmtrain command line. `lmctl --help` lists the commands (client/*_commands.cc).
// Connection settings: flags (--server, --token, --tls-ca, --tls-cert, --tls-key) >
// $LMCTL_SERVER/$LMCTL_TOKEN/... > ~/.config/lmctl/config.yaml (or --config) > defaults
// (127.0.0.1:50051, plaintext, no token); see client/lmctl_config.h.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "client/lmctl_command.h"
#include "client/lmctl_config.h"
#include "client/shell_completion.h"
#include "common/command_line.h"

namespace lmtrain {
namespace {

std::vector<Command> AllCommands() {
  std::vector<Command> all;
  for (auto group :
       {JobCommands, StreamCommands, ClusterCommands, ArtifactCommands, PredictCommands,
        LocalCommands}) {
    for (Command& c : group()) all.push_back(std::move(c));
  }
  all.push_back({"completion", 1, 1, "bash|zsh", "print a shell completion script", nullptr});
  return all;
}

std::string CommandUsage(const Command& c) {
  return absl::StrCat(c.name, c.synopsis.empty() ? "" : " " + c.synopsis);
}

std::string Usage(const CommandLine& cl, const std::vector<Command>& commands) {
  std::string usage = cl.Usage() + "\nCommands (all take -o text|json|yaml):\n";
  for (const Command& c : commands) {
    absl::StrAppend(&usage, "  ", CommandUsage(c), "\n      ", c.summary, "\n");
  }
  return usage;
}

int Completion(const CommandLine& cl, const std::vector<Command>& commands,
               const std::string& shell) {
  CompletionSpec spec;
  for (const Command& c : commands) spec.commands.emplace_back(c.name, c.summary);
  spec.flags = cl.FlagNames();
  auto script = CompletionScript(shell, spec);
  if (!script.ok()) return FailWith(script.status());
  std::cout << *script;
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

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) {
  using namespace lmtrain;
  std::string server, token, tls_ca, tls_cert, tls_key, config;
  CommandContext c;
  std::string output = "text";
  CommandLine cl("lmctl", "the lmtrain command line");
  cl.AddString("server", &server,
               "lm-server address, or replicas HOST:PORT,HOST:PORT (env LMCTL_SERVER; default "
               "127.0.0.1:50051)");
  cl.AddString("token", &token, "bearer token (env LMCTL_TOKEN)");
  cl.AddString("tls-ca", &tls_ca, "PEM CA of the server's certificate; turns TLS on");
  cl.AddString("tls-cert", &tls_cert, "PEM client certificate for mutual TLS (with --tls-key)");
  cl.AddString("tls-key", &tls_key, "PEM private key of --tls-cert");
  cl.AddString("config", &config,
               "config file (env LMCTL_CONFIG; default ~/.config/lmctl/config.yaml)");
  cl.AddString("output", &output, "text | json | yaml (also -o)");
  cl.AddString("request-id", &c.request_id, "submit: idempotency key");
  cl.AddBool("logs", &c.logs, "watch: also print the trainer's log lines");
  cl.AddBool("follow", &c.follow, "events, logs: follow live until the job ends (also -f)");
  cl.AddInt("limit", &c.limit, "list: jobs per page (100)");
  cl.AddString("page-token", &c.page_token, "list: the page a previous list pointed to");
  cl.AddBool("all", &c.all, "list: every page, not just one");
  cl.AddString("view", &c.view,
               "list: basic (no attempts or checkpoints) | full; default basic for the table, "
               "full for -o json|yaml");
  cl.AddString("upload", &c.upload,
               "submit: upload the files a job names: auto (unless the server is loopback), "
               "always, never");
  cl.AddBool("no-upload", &c.no_upload, "submit: keep paths as they are (shared storage)");
  cl.AddInt("step", &c.step, "download, predict: checkpoint step (default: latest)");
  cl.AddString("fill-mask", &c.fill_mask, "predict: a text with the mask token");
  cl.AddString("generate", &c.generate, "predict: a prompt to continue (causal LM)");
  cl.AddInt("top-k", &c.top_k, "predict: fill-mask candidates (5); generate: 0 greedy, k sampling");
  cl.AddInt("max-new-tokens", &c.max_new_tokens, "predict, generate: tokens to add (30)");
  cl.AddDouble("temperature", &c.temperature, "predict, generate: sampling temperature (1.0)");
  cl.AddInt("seed", &c.seed, "predict, generate: sampling seed (42)");
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::string& a : args) {
    if (a == "-o") a = "--output";
    if (a == "-f") a = "--follow";
  }
  const std::vector<Command> commands = AllCommands();
  auto positional = cl.Parse(args);
  if (!positional.ok()) {
    const bool help = IsHelpRequest(positional.status());
    std::cerr << (help ? Usage(cl, commands) : std::string(positional.status().message())) << "\n";
    return help ? 0 : 2;
  }
  const Command* cmd = nullptr;
  for (const Command& candidate : commands) {
    if (!positional->empty() && candidate.name == positional->front()) cmd = &candidate;
  }
  if (cmd == nullptr) {
    if (!positional->empty())
      std::cerr << "lmctl: unknown command '" << positional->front() << "'\n";
    std::cerr << Usage(cl, commands);
    return 2;
  }
  c.args.assign(positional->begin() + 1, positional->end());
  if (c.args.size() < cmd->min_args || c.args.size() > cmd->max_args) {
    std::cerr << "usage: lmctl " << CommandUsage(*cmd) << "\n";
    return 2;
  }
  auto format = ParseOutputFormat(output);
  if (!format.ok()) {
    std::cerr << "lmctl: " << format.status().message() << "\n";
    return 2;
  }
  c.output = *format;
  c.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  if (cmd->name == "completion") return Completion(cl, commands, c.args[0]);
  auto channels = ConnectionFromSettings(server, token, tls_ca, tls_cert, tls_key, config);
  if (!channels.ok()) return FailWith(channels.status());
  JobClient client(*channels);
  c.client = &client;
  c.channels = &*channels;
  return cmd->run(c);
}
