#include "client/input/custom_commands.h"

#include <cstdio>
#include <set>

#include "absl/strings/str_cat.h"
#include "client/terminal/terminal_text.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Kept in step with kMentionBlockStart of daemon/prompt/mentions.h.
constexpr std::string_view kMentionBlockStart = "\n\n<mention path=";

// Descriptions and names come from repository files: no terminal control sequences.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : WithoutC1(s)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<v1::CustomCommand> FetchCustomCommands(v1::AgentDaemon::Stub& stub,
                                                   const std::string& workdir) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListCommandsRequest req;
  req.set_workdir(workdir);
  v1::ListCommandsResponse resp;
  if (!stub.ListCommands(&ctx, req, &resp).ok()) return {};
  return {resp.commands().begin(), resp.commands().end()};
}

bool IsCustomCommand(v1::AgentDaemon::Stub& stub, const std::string& workdir,
                     const SlashCommand& c) {
  if (c.kind != SlashCommand::kUnknown) return false;
  for (const v1::CustomCommand& cc : FetchCustomCommands(stub, workdir)) {
    if (cc.name() == c.name) return true;
  }
  return false;
}

std::string CustomCommandsHelp(const std::vector<v1::CustomCommand>& commands) {
  if (commands.empty()) return "";
  std::string out = "  Custom commands (.agent/commands/, ~/.config/agent/commands/):\n";
  std::set<std::string> seen;
  for (const v1::CustomCommand& c : commands) {
    const std::string name = Printable(c.name());
    std::string usage = "/" + name;
    usage.resize(std::max<size_t>(usage.size(), 13), ' ');
    std::string where = c.scope();
    auto builtin = ParseSlashCommand("/" + c.name());
    if (builtin.has_value() && builtin->kind != SlashCommand::kUnknown) {
      absl::StrAppend(&where, "; not used: /", name, " is built in");
    } else if (!seen.insert(c.name()).second) {
      absl::StrAppend(&where, "; shadowed by the project's /", name);
    }
    const std::string what = c.description().empty() ? "" : Printable(c.description()) + " ";
    absl::StrAppend(&out, "  ", usage, " ", what, "(", Printable(where), ")\n");
  }
  return out;
}

void ShowPromptWarnings(const v1::SendPromptResponse& resp, Mailbox& mailbox, bool to_stderr) {
  for (const std::string& w : resp.warnings()) {
    if (to_stderr) {
      std::fprintf(stderr, "agent: %s\n", Printable(w).c_str());
    } else {
      mailbox.PostNotice(Printable(w));
    }
  }
}

std::string TypedPart(std::string_view user_message) {
  return std::string(user_message.substr(0, user_message.find(kMentionBlockStart)));
}

}  // namespace agent::client
