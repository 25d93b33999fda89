// HttpServer: lm-server's HTTP front end (cpp-httplib): the dashboard (embedded files, see
// dashboard_assets.h), the JSON API (json_api.h), Prometheus /metrics, /healthz and /readyz.
//
//   /                      dashboard (index.html; pages are #/jobs, #/jobs/ID, #/workers)
//   /assets/NAME           dashboard files (only the embedded ones; nothing from disk)
//   /api/v1/...            JSON API (json_api.h); needs authentication when configured
//   /api/v1/jobs/ID/predict  POST: lm-train predict on the job's checkpoint (predict_api.h)
//   /metrics               Prometheus text format 0.0.4 (ServerMetrics)
//   /healthz               200 while the process serves HTTP
//   /readyz                200 when Options::ready says so, else 503 with the reason
//
// Authentication: every /api/ request passes its Authorization header (possibly "") to
// Options::authenticate; an error is 401 {"error": ...}. POST requests must carry
// Content-Type: application/json (so a cross-site form cannot cancel jobs).
//
// GET /api/v1/replica: {"role": "active"} or {"role": "standby", "active": URL or ""}.
// Standby replicas (Options::active_replica says so): every /api/ response carries
// X-Lmtrain-Active-Replica: URL ("unknown" when no replica is active). Reads are served here.
// Writes (every POST) and /api/v1/workers, once authenticated, are answered 307 Temporary
// Redirect with Location: the active replica's URL + the same path and query (307 keeps the
// method and body) and {"error": "...standby...", "active": URL}; or 503 with Retry-After when
// no replica is active or the active one serves no HTTP.
//
//   Start() (binds; error if the address is taken) -> serving -> Stop() / destructor
//
// Thread-safe: requests are served on a pool of `threads` threads; Stop() may be called from
// any thread, once or more. JobManager, Dispatcher and ServerMetrics are not owned and must
// outlive the server.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/auth/principal.h"
#include "server/checkpoint_predictor.h"
#include "server/dispatcher.h"
#include "server/job_manager.h"
#include "server/metrics/server_metrics.h"

namespace httplib {
class Server;
}

namespace lmtrain {

// Turns a request's Authorization header ("" when absent) into the caller, or an error
// (Unauthenticated or PermissionDenied) that becomes 401.
using HttpAuthenticator =
    std::function<absl::StatusOr<Principal>(const std::string& authorization_header)>;

// One route of the HTTP front end, as registered (for the authorization tests and docs).
struct HttpRoute {
  std::string method;   // "GET" or "POST".
  std::string pattern;  // httplib's regex, e.g. "/api/v1/jobs/([^/]+)/cancel".
  bool authenticated;   // Passes Options::authenticate first (every /api/ route); else public.
};

class HttpServer {
 public:
  struct Options {
    std::string listen;              // HOST:PORT (IPv6 as [::1]:PORT); port 0 picks a free port.
    HttpAuthenticator authenticate;  // Empty: every caller is Principal::AuthDisabled().
    std::function<absl::Status()> ready;  // /readyz; empty: always ready.
    // Replicas (server/server_role.h): empty, or returns nullopt, while this server takes
    // writes; else this server is a standby, and it returns the active replica's URL base
    // ("http://host:8080"; "" when none is active or it serves no HTTP).
    std::function<std::optional<std::string>()> active_replica;
    int threads = 8;
    // PEM files: serve HTTPS instead of HTTP (lm-server reuses --tls-cert/--tls-key).
    std::string tls_cert;
    std::string tls_key;
    // Runs POST /api/v1/jobs/ID/predict; not owned, must outlive the server. Null: 501.
    const CheckpointPredictor* predictor = nullptr;
  };

  // Binds and starts serving. InvalidArgument for a malformed address; Unavailable (naming
  // the address) when it cannot be bound, e.g. already in use. `metrics` may be null (no
  // /metrics).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(Options options, JobManager* jobs,
                                                           Dispatcher* dispatcher,
                                                           ServerMetrics* metrics);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Every route served, in registration order (fixed after Start()).
  const std::vector<HttpRoute>& routes() const;
  // Stops accepting, finishes requests in flight, joins the threads.
  void Stop();

 private:
  class Routes;
  HttpServer() = default;

  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<Routes> routes_;
  std::mutex stop_mu_;  // Serialises Stop().
  std::thread thread_;
  int port_ = 0;
};

// Splits "HOST:PORT" ("[::1]:PORT" for IPv6). InvalidArgument names `flag` and the text.
absl::Status ParseHostPort(const std::string& text, const std::string& flag, std::string* host,
                           int* port);

}  // namespace lmtrain
