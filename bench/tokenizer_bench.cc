// lm-bench-tokenize: tokenizer throughput on a text corpus.
//
//   lm-bench-tokenize --tokenizer PATH --corpus FILE [--threads N]
//                     [--seconds S] [--ids-only]
//
// Loads the tokenizer (anything LoadTokenizer accepts) and the corpus's
// non-empty lines, then runs N threads for S seconds (at least one pass over
// the corpus each), every thread tokenizing line after line with
// EncodeWithOffsets(line, add_special_tokens=true) -- the full HF-style
// Encoding -- or Encode with --ids-only. Prints tokens/s per thread and in
// total; the last line is JSON:
//   {"tokens_per_s": ..., "tokens_per_s_per_thread": ..., "threads": N}
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "text/tokenizers/tokenizer.h"

namespace {

struct Options {
  std::string tokenizer;
  std::string corpus;
  int threads = 1;
  double seconds = 5;
  bool ids_only = false;
};

// The flag table: name, whether it takes a value, and how to store it.
struct Flag {
  const char* name;
  bool takes_value;
  bool (*apply)(const std::string& value, Options* options);
};

const Flag kFlags[] = {
    {"--tokenizer", true,
     [](const std::string& v, Options* o) {
       o->tokenizer = v;
       return !v.empty();
     }},
    {"--corpus", true,
     [](const std::string& v, Options* o) {
       o->corpus = v;
       return !v.empty();
     }},
    {"--threads", true,
     [](const std::string& v, Options* o) {
       o->threads = std::atoi(v.c_str());
       return o->threads > 0;
     }},
    {"--seconds", true,
     [](const std::string& v, Options* o) {
       o->seconds = std::atof(v.c_str());
       return o->seconds > 0;
     }},
    {"--ids-only", false,
     [](const std::string&, Options* o) {
       o->ids_only = true;
       return true;
     }},
};

constexpr char kUsage[] =
    "usage: lm-bench-tokenize --tokenizer PATH --corpus FILE [--threads N] "
    "[--seconds S] [--ids-only]\n";

bool ParseFlags(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags) {
      if (arg == f.name) flag = &f;
    }
    if (flag == nullptr) {
      std::cerr << "unknown flag " << arg << "\n";
      return false;
    }
    std::string value;
    if (flag->takes_value) {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        return false;
      }
      value = argv[++i];
    }
    if (!flag->apply(value, options)) {
      std::cerr << "bad value for " << arg << ": \"" << value << "\"\n";
      return false;
    }
  }
  if (options->tokenizer.empty() || options->corpus.empty()) {
    std::cerr << "--tokenizer and --corpus are required\n";
    return false;
  }
  return true;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

struct ThreadResult {
  uint64_t tokens = 0;
  double seconds = 0;
};

// Tokenizes lines from `start` on, wrapping around, until `seconds` have
// passed and at least one full pass is done.
ThreadResult RunThread(const lmtrain::Tokenizer& tokenizer, const std::vector<std::string>& lines,
                       size_t start, const Options& options) {
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  ThreadResult result;
  for (size_t n = 0;; ++n) {
    const std::string& line = lines[(start + n) % lines.size()];
    result.tokens += options.ids_only ? tokenizer.Encode(line).size()
                                      : tokenizer.EncodeWithOffsets(line, true).size();
    if (n % 64 != 63 || n < lines.size()) continue;
    result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    if (result.seconds >= options.seconds) return result;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseFlags(argc, argv, &options)) {
    std::cerr << kUsage;
    return 2;
  }
  auto tokenizer = lmtrain::LoadTokenizer(options.tokenizer);
  if (!tokenizer.ok()) {
    std::cerr << "lm-bench-tokenize: " << tokenizer.status() << "\n";
    return 1;
  }
  const std::vector<std::string> lines = ReadLines(options.corpus);
  if (lines.empty()) {
    std::cerr << "lm-bench-tokenize: " << options.corpus << ": no text\n";
    return 1;
  }
  std::vector<ThreadResult> results(options.threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < options.threads; ++t) {
    threads.emplace_back([&, t] {
      results[t] = RunThread(**tokenizer, lines, t * lines.size() / options.threads, options);
    });
  }
  for (std::thread& thread : threads) thread.join();
  double total = 0;
  for (int t = 0; t < options.threads; ++t) {
    const double rate = results[t].tokens / results[t].seconds;
    total += rate;
    std::printf("thread %d: %llu tokens in %.2f s = %.0f tokens/s\n", t,
                static_cast<unsigned long long>(results[t].tokens), results[t].seconds, rate);
  }
  std::printf("total: %.0f tokens/s over %d threads (%s, %zu lines)\n", total, options.threads,
              options.ids_only ? "Encode" : "EncodeWithOffsets", lines.size());
  std::printf(
      "{\"tokens_per_s\": %.0f, \"tokens_per_s_per_thread\": %.0f, "
      "\"threads\": %d}\n",
      total, total / options.threads, options.threads);
  return 0;
}
