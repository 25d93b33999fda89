#include "server/server_flags.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "server/scheduler_config.h"
#include "storage/sqlite_job_store.h"
#include "worker/agent/artifact_cache.h"

namespace lmtrain {

ServerFlags::ServerFlags()
    : local_cache_max_bytes(ArtifactCache::kDefaultMaxBytes),
      sqlite_read_connections(options.sqlite_read_connections),
      max_request_bytes(options.max_receive_message_bytes) {
  options.http_listen = "127.0.0.1:8080";
}

namespace {

void AddStoreFlags(CommandLine* cl, ServerFlags* f) {
  Server::Options& o = f->options;
  cl->AddString("listen", &o.listen, "gRPC address HOST:PORT (port 0: any free port)");
  cl->AddString("data-dir", &o.data_dir, "folder for lm.db and artifacts");
  cl->AddString("sync", &f->sync,
                "normal: commits survive a crash of lm-server; full: also power loss (an fsync "
                "per commit, shared by concurrent submits)");
  cl->AddInt("sqlite-read-connections", &f->sqlite_read_connections,
             "SQLite store: connections that lists and event reads run on beside the writer "
             "(0 to 64; 0: on the writer, one call at a time)");
  if (const char* store = getenv("LMTRAIN_STORE")) o.store = store;
  cl->AddString("store", &o.store,
                "job store: postgres://USER@HOST:PORT/DB (default $LMTRAIN_STORE; '': SQLite "
                "in --data-dir)");
  cl->AddString("artifacts", &o.artifacts_dir, "artifacts folder (default DATA_DIR/artifacts)");
}

void AddWorkerFlags(CommandLine* cl, ServerFlags* f) {
  Server::Options& o = f->options;
  cl->AddInt("local-worker", &f->local_workers, "run an embedded worker with N slots");
  cl->AddInt("artifact-cache-max-bytes", &f->local_cache_max_bytes,
             "embedded worker: most bytes of fetched artifacts kept in DATA_DIR/worker/"
             "artifact-cache, least recently used evicted first (default 50 GiB; 0: no limit)");
  cl->AddString("trainer", &o.trainer_path,
                "lm-train path for the embedded worker and predictions (default: next to us)");
  cl->AddInt("lease-timeout-ms", &o.lease_timeout_ms, "worker heartbeat timeout");
  cl->AddString("http-listen", &o.http_listen,
                "dashboard, JSON API and /metrics HOST:PORT (port 0: any free port; '': off)");
  cl->AddString("scheduler-config", &f->scheduler_config,
                "YAML: user weights and limits, backfill, preemption, seed");
}

void AddSecurityFlags(CommandLine* cl, ServerFlags* f) {
  Server::Options& o = f->options;
  cl->AddString("auth-tokens", &o.auth_tokens_file,
                "YAML list of bearer tokens and roles; turns authentication on");
  cl->AddString("tls-cert", &o.tls.cert, "PEM server certificate (turns TLS on, with --tls-key)");
  cl->AddString("tls-key", &o.tls.key, "PEM private key of --tls-cert");
  cl->AddString("tls-client-ca", &o.tls.client_ca,
                "PEM CA: require client certificates signed by it (mutual TLS)");
  cl->AddInt("max-request-bytes", &f->max_request_bytes, "largest gRPC request accepted");
  cl->AddInt("max-spec-bytes", &o.max_spec_bytes, "largest job file a submit may carry");
  cl->AddString("data-roots", &f->data_roots,
                "DIR,...: jobs may only read local data/model/tokenizer paths under these");
  cl->AddInt("max-artifact-bytes", &o.max_artifact_bytes, "largest file lmctl may upload");
  cl->AddInt("artifact-quota-bytes", &o.artifact_quota_bytes,
             "bytes of uploads charged to one user (0: unlimited)");
}

void AddReplicaFlags(CommandLine* cl, ServerFlags* f) {
  Server::Options& o = f->options;
  cl->AddString("advertise-address", &o.advertise_address,
                "HOST:PORT clients reach this replica at (PostgreSQL store; default: listen "
                "host, or the hostname for 0.0.0.0, and the bound port)");
  cl->AddString("http-advertise-address", &o.http_advertise_address,
                "HOST:PORT browsers reach this replica's HTTP at; standbys redirect writes "
                "there (default: --http-listen host, or the hostname for 0.0.0.0, and the "
                "bound port)");
  cl->AddBool("exit-on-lease-loss", &f->exit_on_lease_loss,
              "exit with status 3 when the lease is lost, instead of standing by again");
  cl->AddInt("lease-ttl-ms", &o.lease_ttl_ms, "active replica's lease TTL (PostgreSQL store)");
  cl->AddInt("lease-renew-ms", &o.lease_renew_ms, "how often the lease is renewed or sought");
}

}  // namespace

void AddServerFlags(CommandLine* cl, ServerFlags* flags) {
  AddStoreFlags(cl, flags);
  AddWorkerFlags(cl, flags);
  AddSecurityFlags(cl, flags);
  AddReplicaFlags(cl, flags);
}

absl::Status FinishServerFlags(ServerFlags* flags) {
  Server::Options& o = flags->options;
  ASSIGN_OR_RETURN(o.sync, SqliteJobStore::ParseSync(flags->sync));
  if (flags->sqlite_read_connections < 0 ||
      flags->sqlite_read_connections > SqliteJobStore::kMaxReadConnections) {
    return absl::InvalidArgumentError(absl::StrCat("--sqlite-read-connections must be 0 to ",
                                                   SqliteJobStore::kMaxReadConnections, " (got ",
                                                   flags->sqlite_read_connections, ")"));
  }
  o.sqlite_read_connections = static_cast<int>(flags->sqlite_read_connections);
  for (absl::string_view root : absl::StrSplit(flags->data_roots, ',', absl::SkipEmpty())) {
    o.data_roots.push_back(std::filesystem::absolute(std::string(root)).string());
  }
  if (o.lease_renew_ms <= 0 || o.lease_ttl_ms <= o.lease_renew_ms) {
    return absl::InvalidArgumentError("need 0 < --lease-renew-ms < --lease-ttl-ms");
  }
  if (flags->max_request_bytes <= 0 || flags->max_request_bytes > (int64_t{1} << 31) - 1) {
    return absl::InvalidArgumentError("--max-request-bytes must be in 1..2147483647");
  }
  o.max_receive_message_bytes = static_cast<int>(flags->max_request_bytes);
  if (!flags->scheduler_config.empty()) {
    ASSIGN_OR_RETURN(o.scheduler, LoadSchedulerConfig(flags->scheduler_config));
  }
  return absl::OkStatus();
}

std::string CleartextTokensWarning(const Server::Options& o) {
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  if (o.auth_tokens_file.empty() || o.tls.enabled() || host == "127.0.0.1" || host == "localhost" ||
      host == "[::1]") {
    return "";
  }
  return absl::StrCat("bearer tokens travel in clear text on ", o.listen,
                      "; add --tls-cert/--tls-key (docs/security.md)");
}

}  // namespace lmtrain
