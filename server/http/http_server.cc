#include "server/http/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/http/cluster_gauges.h"
#include "server/http/dashboard_assets.h"
#include "server/http/json_api.h"
#include "server/http/predict_api.h"

namespace lmtrain {
namespace {
using nlohmann::json;

constexpr char kJobPath[] = R"(/api/v1/jobs/([^/]+))";
constexpr char kActiveReplicaHeader[] = "X-Lmtrain-Active-Replica";
constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; frame-ancestors 'none'";

void SendJson(httplib::Response& res, const ApiResponse& api) {
  res.status = api.status;
  res.set_header("Cache-Control", "no-store");
  // Stored text may hold invalid UTF-8 (log lines): replace it rather than fail the response.
  res.set_content(
      api.text.empty() ? api.body.dump(-1, ' ', false, json::error_handler_t::replace) : api.text,
      "application/json");
}

constexpr char kJsonPostError[] = "POST needs Content-Type: application/json";

// POST bodies must be JSON, so that a cross-site form cannot post them.
bool IsJsonPost(const httplib::Request& req) {
  return req.get_header_value("Content-Type").rfind("application/json", 0) == 0;
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, ApiResponse{status, json{{"error", message}}});
}

// SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
// lm-server bind the same port silently instead of failing.
void SocketOptions(int sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

}  // namespace

// The route table: adapters from httplib requests to JsonApi and the other endpoints.
class HttpServer::Routes {
 public:
  Routes(Options options, JobManager* jobs, Dispatcher* dispatcher, ServerMetrics* metrics)
      : options_(std::move(options)),
        api_(jobs, dispatcher),
        predict_api_(jobs, options_.predictor),
        jobs_(jobs),
        dispatcher_(dispatcher),
        metrics_(metrics) {}

  void Register(httplib::Server& s) {
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      MarkStandby(req, res);
      return httplib::Server::HandlerResponse::Unhandled;
    });
    Public(s, "/",
           [](const httplib::Request&, httplib::Response& res) { ServeAsset("index.html", res); });
    Public(s, R"(/assets/(.+))", [](const httplib::Request& req, httplib::Response& res) {
      ServeAsset(req.matches[1], res);
    });
    Public(s, "/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    Public(s, "/readyz", [this](const httplib::Request&, httplib::Response& res) { Ready(res); });
    Public(s, "/metrics",
           [this](const httplib::Request&, httplib::Response& res) { Metrics(res); });
    Api(s, "/api/v1/jobs", [this](const Principal& p, const httplib::Request& req) {
      return api_.ListJobs(p, req.params);
    });
    Api(s, kJobPath, [this](const Principal& p, const httplib::Request& req) {
      return api_.GetJob(p, req.matches[1]);
    });
    Api(s, absl::StrCat(kJobPath, "/metrics"),
        [this](const Principal& p, const httplib::Request& req) {
          return api_.JobMetrics(p, req.matches[1], req.params);
        });
    Api(s, absl::StrCat(kJobPath, "/events"),
        [this](const Principal& p, const httplib::Request& req) {
          return api_.JobEvents(p, req.matches[1], req.params);
        });
    Api(s, absl::StrCat(kJobPath, "/logs"),
        [this](const Principal& p, const httplib::Request& req) {
          return api_.JobLogs(p, req.matches[1], req.params);
        });
    Api(s, "/api/v1/replica",
        [this](const Principal&, const httplib::Request&) { return Replica(); });
    Api(
        s, "/api/v1/workers",
        [this](const Principal& p, const httplib::Request&) { return api_.ListWorkers(p); },
        /*active_only=*/true);
    ApiPost(s, absl::StrCat(kJobPath, "/cancel"),
            [this](const Principal& p, const httplib::Request& req) {
              return api_.CancelJob(p, req.matches[1], req.body);
            });
    ApiPost(s, absl::StrCat(kJobPath, "/predict"),
            [this](const Principal& p, const httplib::Request& req) {
              return predict_api_.Predict(p, req.matches[1], req.body);
            });
    s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req,
                                                                httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      SendError(res, res.status,
                res.status == 404
                    ? absl::StrCat("no such endpoint: ", req.method, " ", req.path.substr(0, 200))
                    : absl::StrCat("HTTP ", res.status));
      return httplib::Server::HandlerResponse::Handled;
    }));
    s.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
          std::string what = "internal error";
          try {
            std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            what = absl::StrCat("internal error: ", e.what());
          } catch (...) {
          }
          SendError(res, 500, what);
        });
  }

  const std::vector<HttpRoute>& table() const { return table_; }

 private:
  using Handler = std::function<ApiResponse(const Principal&, const httplib::Request&)>;

  // GET route without authentication.
  void Public(httplib::Server& s, const std::string& pattern, httplib::Server::Handler handler) {
    table_.push_back({"GET", pattern, false});
    s.Get(pattern, std::move(handler));
  }

  static void ServeAsset(const std::string& name, httplib::Response& res) {
    const DashboardAsset* asset = FindDashboardAsset(name);
    if (asset == nullptr) {
      SendError(res, 404, absl::StrCat("no such dashboard file: ", name.substr(0, 200)));
      return;
    }
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(std::string(asset->body), std::string(asset->content_type));
  }

  absl::StatusOr<Principal> Authenticate(const httplib::Request& req) {
    if (!options_.authenticate) return Principal::AuthDisabled();
    return options_.authenticate(req.get_header_value("Authorization"));
  }

  // GET route with authentication; `active_only`: what only the active replica knows (its
  // workers), redirected there by a standby.
  void Api(httplib::Server& s, const std::string& pattern, Handler handler,
           bool active_only = false) {
    table_.push_back({"GET", pattern, true});
    s.Get(pattern, [this, handler, active_only](const httplib::Request& req,
                                                httplib::Response& res) {
      absl::StatusOr<Principal> p = Authenticate(req);
      if (!p.ok()) return Unauthorized(res, p.status());
      if (active_only && RedirectedToActive(req, res)) return;
      SendJson(res, handler(*p, req));
    });
  }

  std::optional<std::string> ActiveReplica() const {
    if (!options_.active_replica) return std::nullopt;
    return options_.active_replica();
  }

  // Tells the dashboard, on every API response of a standby, where the active replica is.
  void MarkStandby(const httplib::Request& req, httplib::Response& res) const {
    if (req.path.rfind("/api/", 0) != 0) return;
    if (std::optional<std::string> active = ActiveReplica(); active.has_value()) {
      res.set_header(kActiveReplicaHeader, active->empty() ? "unknown" : *active);
    }
  }

  ApiResponse Replica() const {
    std::optional<std::string> active = ActiveReplica();
    if (!active.has_value()) return ApiResponse{200, json{{"role", "active"}}};
    return ApiResponse{200, json{{"role", "standby"}, {"active", *active}}};
  }

  // On a standby: answers `req` with a redirect to the active replica (or 503 when there is
  // none to name) and returns true. False on the active replica.
  bool RedirectedToActive(const httplib::Request& req, httplib::Response& res) const {
    std::optional<std::string> active = ActiveReplica();
    if (!active.has_value()) return false;
    if (active->empty()) {
      res.set_header("Retry-After", "2");
      SendError(res, 503,
                "this lm-server is a standby and no active replica serving HTTP is known now; "
                "retry shortly");
      return true;
    }
    const std::string location = *active + req.target;
    res.set_header("Location", location);
    SendJson(res, ApiResponse{307, json{{"error", absl::StrCat("this lm-server is a standby; "
                                                               "send this to the active replica "
                                                               "at ", *active)},
                                        {"active", *active}}});
    return true;
  }

  static void Unauthorized(httplib::Response& res, const absl::Status& status) {
    res.set_header("WWW-Authenticate", "Bearer");
    SendError(res, 401, std::string(status.message()));
  }

  // POST route (a write): authentication, then a standby's redirect, then the JSON check.
  void ApiPost(httplib::Server& s, const std::string& pattern, Handler handler) {
    table_.push_back({"POST", pattern, true});
    s.Post(pattern, [this, handler](const httplib::Request& req, httplib::Response& res) {
      absl::StatusOr<Principal> p = Authenticate(req);
      if (!p.ok()) return Unauthorized(res, p.status());
      if (RedirectedToActive(req, res)) return;
      if (!IsJsonPost(req)) return SendError(res, 415, kJsonPostError);
      SendJson(res, handler(*p, req));
    });
  }

  void Ready(httplib::Response& res) {
    absl::Status s = options_.ready ? options_.ready() : absl::OkStatus();
    res.status = s.ok() ? 200 : 503;
    res.set_content(s.ok() ? "ready\n" : absl::StrCat("not ready: ", s.message(), "\n"),
                    "text/plain");
  }

  void Metrics(httplib::Response& res) {
    if (metrics_ == nullptr) return SendError(res, 404, "metrics are not enabled");
    absl::Status s = UpdateClusterGauges(jobs_, dispatcher_, metrics_);
    if (!s.ok()) return SendError(res, 500, absl::StrCat("metrics: ", s.message()));
    res.set_content(metrics_->registry.Render(), kPrometheusContentType);
  }

  const Options options_;
  JsonApi api_;
  PredictApi predict_api_;
  JobManager* const jobs_;
  Dispatcher* const dispatcher_;
  ServerMetrics* const metrics_;
  std::vector<HttpRoute> table_;  // Filled by Register().
};

absl::Status ParseHostPort(const std::string& text, const std::string& flag, std::string* host,
                           int* port) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected HOST:PORT with PORT in [0, 65535] (got '", text, "')"));
  };
  if (colon == std::string::npos || colon == 0) return bad();
  *host = text.substr(0, colon);
  if (host->front() == '[') {
    if (host->size() < 3 || host->back() != ']') return bad();
    *host = host->substr(1, host->size() - 2);
  }
  if (!absl::SimpleAtoi(text.substr(colon + 1), port) || *port < 0 || *port > 65535) return bad();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(Options options, JobManager* jobs,
                                                              Dispatcher* dispatcher,
                                                              ServerMetrics* metrics) {
  std::string host;
  int port = 0;
  if (absl::Status s = ParseHostPort(options.listen, "--http-listen", &host, &port); !s.ok()) {
    return s;
  }
  std::unique_ptr<HttpServer> server(new HttpServer());
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("HTTPS needs both a certificate and its key");
  }
  if (!options.tls_cert.empty()) {
    auto https = std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(),
                                                      options.tls_key.c_str());
    if (!https->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("HTTPS: cannot load certificate ",
                                                     options.tls_cert, " with key ",
                                                     options.tls_key));
    }
    server->http_ = std::move(https);
  } else {
    server->http_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& http = *server->http_;
  const int threads = std::max(1, options.threads);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_socket_options(SocketOptions);
  // A response goes out as two writes (headers, then body): with Nagle's algorithm the body
  // waits for the client's delayed ACK of the headers (40 ms on Linux) on a kept-alive
  // connection.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_timeout(2);
  http.set_payload_max_length(1 << 20);
  server->routes_ = std::make_unique<Routes>(std::move(options), jobs, dispatcher, metrics);
  server->routes_->Register(http);
  server->port_ =
      port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
  if (server->port_ <= 0) {
    server->port_ = 0;
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP on ", host, ":", port,
        " (address in use or not local?); choose another with --http-listen HOST:PORT"));
  }
  server->thread_ = std::thread([&http] { http.listen_after_bind(); });
  // Stop() before the listen loop has started would be lost: wait until it runs.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!http.is_running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  if (!http.is_running()) return absl::InternalError("HTTP server did not start");
  return server;
}

void HttpServer::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (!thread_.joinable()) return;
  http_->stop();
  thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

const std::vector<HttpRoute>& HttpServer::routes() const { return routes_->table(); }

}  // namespace lmtrain
