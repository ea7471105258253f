#include "client/commands/context_commands.h"

#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "client/text/session_table.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

std::string Count(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Size(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
}

void Deadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
}

v1::Usage* LastTurnUsage() {
  static v1::Usage* u = new v1::Usage();
  return u;
}

}  // namespace

std::string UsageText(const v1::Usage& u) {
  std::string out = absl::StrCat(Count(u.prompt_tokens()), " in");
  if (u.cached_tokens() > 0 || u.cache_write_tokens() > 0) {
    absl::StrAppend(&out, " (", Count(u.cached_tokens()), " cached");
    if (u.cache_write_tokens() > 0) {
      absl::StrAppend(&out, ", ", Count(u.cache_write_tokens()), " written to cache");
    }
    out += ")";
  }
  absl::StrAppend(&out, ", ", Count(u.completion_tokens()), " out, ", u.requests(), " request",
                  u.requests() == 1 ? "" : "s");
  if (u.retries() > 0) {
    absl::StrAppend(&out, ", ", u.retries(), " retr", u.retries() == 1 ? "y" : "ies");
  }
  if (u.cost_usd() > 0) absl::StrAppend(&out, absl::StrFormat(", $%.4g", u.cost_usd()));
  return out;
}

void RememberTurnUsage(const v1::Usage& usage) { *LastTurnUsage() = usage; }

void PrintTurnUsage() { std::fprintf(stderr, "usage: %s\n", UsageText(*LastTurnUsage()).c_str()); }

std::string InstructionsText(const v1::GetSessionResponse& s) {
  if (s.instructions().empty()) return "instructions: none";
  std::string out = "instructions: ";
  for (int i = 0; i < s.instructions_size(); ++i) {
    const v1::InstructionFile& f = s.instructions(i);
    // A directory name is the repository's choice: no escape of it reaches the terminal.
    absl::StrAppend(&out, i ? ", " : "", PrintableLine(f.path()), " (", Size(f.bytes()),
                    f.truncated() ? ", cut" : "", ")");
  }
  return out;
}

std::string ContextText(const v1::ContextReport& r) {
  auto row = [&](const char* name, int64_t tokens) {
    std::string share;
    if (r.context_tokens() > 0) {
      share = absl::StrFormat("  %5.1f%%", 100.0 * static_cast<double>(tokens) /
                                               static_cast<double>(r.context_tokens()));
    }
    return absl::StrFormat("  %-13s %10s%s\n", name, Count(tokens), share);
  };
  std::string out = absl::StrCat("context of the next request, in tokens (",
                                 r.estimated() ? "estimated: 4 characters a token"
                                               : "as the provider counted the last request",
                                 "):\n");
  out += row("system prompt", r.system_tokens());
  out += row("instructions", r.instruction_tokens());
  out += row("tool schemas", r.tool_tokens());
  out += row("messages", r.message_tokens());
  out += row("total", r.total_tokens());
  if (r.context_tokens() > 0) {
    absl::StrAppend(&out, "  of a window of ", Count(r.context_tokens()), "\n");
  } else {
    out += "  window unknown: set AGENT_CONTEXT_TOKENS\n";
  }
  return out;
}

// GetSession with the commands' deadline.
static grpc::Status GetSessionInfo(v1::AgentDaemon::Stub& stub, const std::string& session_id,
                                   v1::GetSessionResponse* resp) {
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::GetSessionRequest req;
  req.set_id(session_id);
  return stub.GetSession(&ctx, req, resp);
}

std::string FetchStatusExtra(v1::AgentDaemon::Stub& stub, const std::string& session_id) {
  v1::GetSessionResponse resp;
  grpc::Status s = GetSessionInfo(stub, session_id, &resp);
  if (!s.ok()) return "cannot read the session: " + s.error_message();
  return absl::StrCat(InstructionsText(resp), "\nusage: ", UsageText(resp.session().usage()));
}

std::string FetchContext(v1::AgentDaemon::Stub& stub, const std::string& session_id) {
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::GetContextRequest req;
  req.set_session_id(session_id);
  v1::ContextReport resp;
  grpc::Status s = stub.GetContext(&ctx, req, &resp);
  if (!s.ok()) return "cannot read the context: " + s.error_message();
  return std::string(absl::StripTrailingAsciiWhitespace(ContextText(resp)));
}

int StatusCommand(v1::AgentDaemon::Stub& stub, const std::string& session_id) {
  v1::GetSessionResponse resp;
  grpc::Status s = GetSessionInfo(stub, session_id, &resp);
  if (!s.ok()) {
    std::fprintf(stderr, "agent: %s\n", s.error_message().c_str());
    return 1;
  }
  const v1::Session& info = resp.session();
  std::printf("session %s  %s\nmodel: %s\nworkdir: %s\n%s\nusage: %s\n", info.id().c_str(),
              info.title().c_str(), info.model().c_str(), info.workdir().c_str(),
              InstructionsText(resp).c_str(), UsageText(info.usage()).c_str());
  return 0;
}

}  // namespace agent::client
