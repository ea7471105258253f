// RETURN_IF_ERROR / ASSIGN_OR_RETURN: Debian's Abseil (20220623) has no status_macros.h.
// Replace with ABSL_RETURN_IF_ERROR once the platform's Abseil has it.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define AGENT_CONCAT_INNER_(a, b) a##b
#define AGENT_CONCAT_(a, b) AGENT_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status agent_status_ = (expr);         \
    if (!agent_status_.ok()) return agent_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(AGENT_CONCAT_(agent_statusor_, __LINE__), lhs, rexpr)

#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                           \
  if (!statusor.ok()) return statusor.status();      \
  lhs = std::move(statusor).value()

namespace agent {

// Returns `s` with `context: ` put before its message; OK stays OK.
inline absl::Status Annotate(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(), std::string(context) + ": " + std::string(s.message()));
}

}  // namespace agent
