// The client's side of the project context: what /status adds (instruction files, usage and
// cost), /context, and the usage line `--usage` prints after a one-shot turn. Formatting is
// pure; the Fetch functions make one unary call each. Not thread-safe (use from one thread).
#pragma once

#include <string>

#include "agent/v1/agent.grpc.pb.h"

namespace agent::client {

// "5,000 in (1,500 cached), 350 out, 4 requests, 1 retry, $7.15" (no cost when 0).
std::string UsageText(const agent::v1::Usage& usage);

// "instructions: AGENTS.md (1.2 KiB), sub/CLAUDE.md (300 B, cut)"; "instructions: none".
std::string InstructionsText(const agent::v1::GetSessionResponse& session);

// The /context table: each part in tokens and its share of the window.
std::string ContextText(const agent::v1::ContextReport& report);

// The usage of the one-shot turn that ended last (session_events.cc records it), printed on
// stderr by `agent --usage "…"`.
void RememberTurnUsage(const agent::v1::Usage& usage);
void PrintTurnUsage();

// The lines /status and `agent status ID` add: instruction files and session usage. An
// error line when the call fails.
std::string FetchStatusExtra(agent::v1::AgentDaemon::Stub& stub, const std::string& session_id);
std::string FetchContext(agent::v1::AgentDaemon::Stub& stub, const std::string& session_id);

// `agent status ID`: the session, its instruction files and usage on stdout; the exit code.
int StatusCommand(agent::v1::AgentDaemon::Stub& stub, const std::string& session_id);

}  // namespace agent::client
