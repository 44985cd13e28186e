// File: binlog/status_macros.h
//
// Status propagation macros. The pinned abseil (Debian's 20220623) has no
// ABSL_RETURN_IF_ERROR / ABSL_ASSIGN_OR_RETURN; these stand in until it does.

#ifndef BINLOG_BINLOG_STATUS_MACROS_H_
#define BINLOG_BINLOG_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BINLOG_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::absl::Status _binlog_status = (expr);     \
    if (!_binlog_status.ok()) return _binlog_status; \
  } while (0)

#define BINLOG_STATUS_CONCAT_INNER_(a, b) a##b
#define BINLOG_STATUS_CONCAT_(a, b) BINLOG_STATUS_CONCAT_INNER_(a, b)

#define BINLOG_ASSIGN_OR_RETURN(lhs, expr)                               \
  BINLOG_ASSIGN_OR_RETURN_IMPL_(                                         \
      BINLOG_STATUS_CONCAT_(_binlog_statusor_, __LINE__), lhs, expr)

#define BINLOG_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // BINLOG_BINLOG_STATUS_MACROS_H_
