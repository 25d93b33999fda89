#include "bench/api_load.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lmtrain::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct ClientTally {
  int64_t calls = 0;
  int64_t errors = 0;
  std::string first_error;
  std::vector<double> latency_ms;
  std::vector<SlowCall> slow;
};

// One client's timed loop: calls until `end`, recording each latency (and the slow ones).
void RunClient(Operation& op, Clock::time_point end, int client, double slow_ms,
               ClientTally* tally) {
  while (Clock::now() < end) {
    const int64_t start_us = slow_ms > 0 ? absl::ToUnixMicros(absl::Now()) : 0;
    const Clock::time_point start = Clock::now();
    double ms = -1;
    absl::Status s = op.Call(&ms);
    if (ms < 0) ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (slow_ms > 0 && ms > slow_ms) tally->slow.push_back({start_us, client, ms});
    ++tally->calls;
    if (s.ok()) {
      tally->latency_ms.push_back(ms);
    } else if (tally->errors++ == 0) {
      tally->first_error = s.ToString();
    }
  }
}

double Round3(double v) { return std::round(v * 1000) / 1000; }

}  // namespace

double LoadResult::PercentileMs(double q) const {
  if (latency_ms.empty()) return 0;
  const size_t i = static_cast<size_t>(q * static_cast<double>(latency_ms.size() - 1) + 0.5);
  return latency_ms[std::min(i, latency_ms.size() - 1)];
}

void RunWarmClients(int clients, const OperationFactory& factory,
                    const std::function<void()>& start,
                    const std::function<void(int, Operation&)>& body) {
  std::vector<std::unique_ptr<Operation>> ops;
  for (int i = 0; i < clients; ++i) ops.push_back(factory(i));
  absl::BlockingCounter warmed_up(clients);
  absl::Notification go;
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      double ignored;
      (void)ops[i]->Call(&ignored);
      warmed_up.DecrementCount();
      go.WaitForNotification();
      body(i, *ops[i]);
    });
  }
  warmed_up.Wait();
  start();
  go.Notify();
  for (std::thread& t : threads) t.join();
}

LoadResult RunClosedLoop(int clients, double seconds, const OperationFactory& factory,
                         double slow_ms) {
  std::vector<ClientTally> tallies(clients);
  Clock::time_point start;
  Clock::time_point end;
  RunWarmClients(
      clients, factory,
      [&] {
        start = Clock::now();
        end = start +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
      },
      [&](int i, Operation& op) { RunClient(op, end, i, slow_ms, &tallies[i]); });
  LoadResult result;
  result.clients = clients;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (ClientTally& t : tallies) {
    result.calls += t.calls;
    result.errors += t.errors;
    if (result.first_error.empty()) result.first_error = t.first_error;
    result.latency_ms.insert(result.latency_ms.end(), t.latency_ms.begin(), t.latency_ms.end());
    result.slow.insert(result.slow.end(), t.slow.begin(), t.slow.end());
  }
  std::sort(result.latency_ms.begin(), result.latency_ms.end());
  std::sort(result.slow.begin(), result.slow.end(),
            [](const SlowCall& a, const SlowCall& b) { return a.start_unix_us < b.start_unix_us; });
  return result;
}

std::string SlowCallLines(const LoadResult& result) {
  std::string out;
  for (const SlowCall& c : result.slow) {
    const absl::Time t = absl::FromUnixMicros(c.start_unix_us);
    absl::StrAppend(&out,
                    "slow call: ", absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone()),
                    " client ", c.client, " ", absl::StrFormat("%.1f", c.ms), " ms\n");
  }
  return out;
}

std::string ResultJson(const std::string& op, const LoadResult& r) {
  nlohmann::json j;
  j["op"] = op;
  j["clients"] = r.clients;
  j["seconds"] = Round3(r.seconds);
  j["calls"] = r.calls;
  j["qps"] = std::round(r.Qps());
  j["p50_ms"] = Round3(r.PercentileMs(0.50));
  j["p90_ms"] = Round3(r.PercentileMs(0.90));
  j["p99_ms"] = Round3(r.PercentileMs(0.99));
  j["max_ms"] = Round3(r.latency_ms.empty() ? 0 : r.latency_ms.back());
  j["errors"] = r.errors;
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  return j.dump();
}

}  // namespace lmtrain::bench
