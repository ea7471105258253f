// How an Approve says a person typed its answer: gRPC metadata `agent-person: 1`, set by the
// agent client for an answer given at its prompt on a terminal, never by an automatic approver
// (`--yes` without a terminal, scripts). An approval marked requires_person is allowed only
// by such an answer; the daemon refuses any other with PERMISSION_DENIED (approval_gate.h).
// Metadata rather than a request field keeps the wire format of ApproveRequest as it was.
#pragma once

namespace agent {

inline constexpr char kPersonAnswerKey[] = "agent-person";
inline constexpr char kPersonAnswerValue[] = "1";

}  // namespace agent
