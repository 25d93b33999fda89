// Status helpers shared by every module: RETURN_IF_ERROR / ASSIGN_OR_RETURN.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define LMTRAIN_CONCAT_INNER_(a, b) a##b
#define LMTRAIN_CONCAT_(a, b) LMTRAIN_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status _lmtrain_status = (expr);     \
    if (!_lmtrain_status.ok()) return _lmtrain_status; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(LMTRAIN_CONCAT_(_lmtrain_sor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()
