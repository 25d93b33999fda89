// A small table-driven command-line parser shared by the lmtrain programs.
//
//   std::string listen = "127.0.0.1:50051"; int slots = 1; bool verbose = false;
//   CommandLine cl("lm-server", "Runs the control plane.");
//   cl.AddString("listen", &listen, "HOST:PORT to serve gRPC on");
//   cl.AddInt("slots", &slots, "...");  cl.AddBool("verbose", &verbose, "...");
//   ASSIGN_OR_RETURN(std::vector<std::string> positional, cl.Parse(argc - 1, argv + 1));
//
// Accepts --name VALUE, --name=VALUE, --flag / --no-flag for booleans, -h/--help (returns
// a status whose message is the usage text, code Cancelled), and "--" to end flags.
// Errors (InvalidArgument) name the flag: "--slots: expected an integer (got 'x')".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

class CommandLine {
 public:
  CommandLine(std::string program, std::string summary);

  void AddString(const std::string& name, std::string* value, const std::string& help);
  void AddInt(const std::string& name, int64_t* value, const std::string& help);
  void AddDouble(const std::string& name, double* value, const std::string& help);
  void AddBool(const std::string& name, bool* value, const std::string& help);

  // Parses args (without the program name); returns positional arguments in order.
  absl::StatusOr<std::vector<std::string>> Parse(const std::vector<std::string>& args);
  absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv);
  std::string Usage() const;
  // The flags added so far, in order (for shell completion): name without "--", and whether
  // it takes a value (every flag but booleans).
  std::vector<std::pair<std::string, bool>> FlagNames() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    bool is_bool = false;
    std::function<absl::Status(const std::string&)> set;
  };
  const Flag* Find(const std::string& name) const;

  std::string program_;
  std::string summary_;
  std::vector<Flag> flags_;
};

// True when a Parse() status is the --help request (print its message, exit 0).
bool IsHelpRequest(const absl::Status& status);

}  // namespace lmtrain
