// PeerOrigin: whether an API call comes from a person's client or from a program a tool
// started (a `bash` command, an MCP server, what they start in turn). Programs a tool starts
// are untrusted (DESIGN.md, Trust boundaries) yet run as the user, so the socket's uid check
// cannot tell them apart: the caller's process ancestry can. agentd is the child subreaper of
// its descendants (tools::BecomeChildSubreaper), so a tool's process that double-forks or
// calls setsid is re-parented to the daemon and stays its descendant until it exits.
//
// What it does not see: a tool's process that asks another service of the user that is not
// the daemon's descendant (a running tmux server, systemd --user) to start the client for it.
// The sandbox closes that door (a confined command cannot reach those sockets).
#pragma once

#include <sys/types.h>

#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"

namespace agent::daemon {

// Whether `pid` is a descendant of `ancestor`, from /proc (bounded walk). A pid that cannot
// be read (gone, or 0: from another PID namespace) counts as a descendant: fail closed.
bool IsDescendantOf(pid_t pid, pid_t ancestor);

// The pid of the process at the other end of the call's connection (SO_PEERCRED of the fd
// the daemon accepted, named in the peer string "fd:N"); 0 when it cannot be told.
pid_t PeerPid(const grpc::CallbackServerContext& ctx);

// Whether the call carries the metadata of an answer a person typed (common/person_answer.h).
bool AnsweredByPerson(const grpc::CallbackServerContext& ctx);

// PermissionDenied when the call comes from a program a tool started (or its origin cannot
// be told), naming `what` it may not do; OK for a person's client.
absl::Status RefuseToolProcess(const grpc::CallbackServerContext& ctx, std::string_view what);

}  // namespace agent::daemon
