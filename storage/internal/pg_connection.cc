#include "storage/internal/pg_connection.h"

#include <libpq-fe.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "storage/internal/pg_status.h"

namespace lmtrain::storage_internal {
namespace {

std::string Trimmed(const char* message) {
  return std::string(absl::StripTrailingAsciiWhitespace(message ? message : ""));
}

absl::Status CheckParses(const std::string& uri) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &error);
  if (options != nullptr) {
    PQconninfoFree(options);
    return absl::OkStatus();
  }
  std::string why = error ? Trimmed(error) : "out of memory";
  PQfreemem(error);
  return absl::InvalidArgumentError(absl::StrCat("PostgreSQL connection URI is not valid: ", why,
                                                 " (expected postgres://USER@HOST:PORT/DATABASE)"));
}

std::string TargetOf(PGconn* conn) {
  return absl::StrCat(PQhost(conn) ? PQhost(conn) : "", ":", PQport(conn) ? PQport(conn) : "", "/",
                      PQdb(conn) ? PQdb(conn) : "");
}

}  // namespace

std::string PgText(absl::string_view text) {
  std::string valid = ToValidUtf8(text);
  if (valid.find('\0') == std::string::npos) return valid;
  return absl::StrReplaceAll(valid, {{absl::string_view("\0", 1), "\xEF\xBF\xBD"}});
}

PgResult::PgResult(PGresult* result) : result_(result) {}
PgResult::PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
PgResult::~PgResult() { PQclear(result_); }
int PgResult::rows() const { return PQntuples(result_); }
bool PgResult::IsNull(int row, int column) const { return PQgetisnull(result_, row, column); }
std::string PgResult::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column), PQgetlength(result_, row, column));
}
int64_t PgResult::Int64(int row, int column) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(PQgetvalue(result_, row, column), &value)) return 0;
  return value;
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& uri) {
  RETURN_IF_ERROR(CheckParses(uri));
  // Later keywords override earlier ones, and the expanded URI (dbname) comes after the
  // defaults, so the URI's own settings win; client_encoding comes last so text is UTF-8.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", "client_encoding",
                        nullptr};
  const char* values[] = {"10", "lm-server", uri.c_str(), "UTF8", nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return absl::ResourceExhaustedError("PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    absl::Status error = absl::UnavailableError(absl::StrCat(
        "cannot connect to PostgreSQL at ", TargetOf(conn), ": ", Trimmed(PQerrorMessage(conn))));
    PQfinish(conn);
    return error;
  }
  return std::unique_ptr<PgConnection>(new PgConnection(conn, TargetOf(conn)));
}

PgConnection::PgConnection(PGconn* conn, std::string target)
    : conn_(conn), target_(std::move(target)) {}

PgConnection::~PgConnection() { PQfinish(conn_); }

bool PgConnection::connected() const { return PQstatus(conn_) == CONNECTION_OK; }

absl::Status PgConnection::Reconnect() {
  prepared_.clear();  // The new server backend knows none of them.
  PQreset(conn_);
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("cannot reconnect to PostgreSQL at ", target_, ": ",
                                             Trimmed(PQerrorMessage(conn_))));
}

absl::StatusOr<PgResult> PgConnection::Check(PGresult* raw, absl::string_view what) {
  PgResult result(raw);
  const ExecStatusType status = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return PgError(conn_, raw, target_, what);
}

absl::Status PgConnection::Exec(absl::string_view sql, absl::string_view what) {
  return Check(PQexec(conn_, std::string(sql).c_str()), what).status();
}

absl::Status PgConnection::Prepare(const PgStatement& statement, int n_params) {
  if (prepared_.count(statement.name) > 0) return absl::OkStatus();
  RETURN_IF_ERROR(Check(PQprepare(conn_, statement.name, statement.sql, n_params, nullptr),
                        absl::StrCat("prepare ", statement.name))
                      .status());
  prepared_.insert(statement.name);
  return absl::OkStatus();
}

absl::StatusOr<PgResult> PgConnection::Run(const PgStatement& statement,
                                           const std::vector<PgParam>& params) {
  const int n = static_cast<int>(params.size());
  RETURN_IF_ERROR(Prepare(statement, n));
  std::vector<const char*> values;
  for (const PgParam& p : params) values.push_back(p.has_value() ? p->c_str() : nullptr);
  return Check(PQexecPrepared(conn_, statement.name, n, values.data(), nullptr, nullptr, 0),
               statement.name);
}

}  // namespace lmtrain::storage_internal
