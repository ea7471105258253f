#include "client/acp/session_updates.h"

#include "client/acp/tool_calls.h"

namespace agent::client::acp {
namespace {

namespace v1 = agent::v1;

Json Chunk(const char* kind, const std::string& text) {
  return Json{{"sessionUpdate", kind}, {"content", Json{{"type", "text"}, {"text", text}}}};
}

Json Update(const char* kind, Json fields) {
  fields["sessionUpdate"] = kind;
  return fields;
}

void KeepTail(std::string& s) {
  if (s.size() <= kMaxToolOutputBytes) return;
  size_t cut = s.size() - kMaxToolOutputBytes;
  while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) ++cut;
  s.erase(0, cut);  // never in the middle of a UTF-8 sequence
}

Json PlanUpdate(const v1::Plan& p) {
  Json entries = Json::array();
  for (const v1::PlanStep& s : p.steps()) {
    entries.push_back(
        Json{{"content", s.text()}, {"priority", "medium"}, {"status", PlanStatus(s.status())}});
  }
  return Update("plan", Json{{"entries", entries}});
}

// The text of an OpenAI message's content: a string, or the text parts of a list.
std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const Json& part : content) {
      if (part.is_object()) out += GetString(part, "text");
    }
  }
  return out;
}

}  // namespace

std::string PlanStatus(v1::PlanStepStatus s) {
  switch (s) {
    case v1::PLAN_STEP_STATUS_IN_PROGRESS:
      return "in_progress";
    case v1::PLAN_STEP_STATUS_DONE:
      return "completed";
    default:
      return "pending";
  }
}

Json UpdateMapper::Result(const v1::ToolResult& r) {
  Call call = calls_[r.call_id()];
  calls_.erase(r.call_id());
  Json f =
      ToolCallFields(r.call_id(), call.name.empty() ? r.name() : call.name, call.arguments, cwd_);
  f.erase("rawInput");
  f["status"] = r.is_error() ? "failed" : "completed";
  f["rawOutput"] = Json{{"content", r.content()}};
  std::string text = r.content();
  KeepTail(text);
  const bool edit = f.contains("content") && !r.is_error();
  if (!edit) f["content"] = TextContent(text, r.name() == "bash");
  return Update("tool_call_update", std::move(f));
}

std::vector<Json> UpdateMapper::Map(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kTextDelta:
      return {Chunk("agent_message_chunk", e.text_delta().text())};
    case v1::Event::kReasoningDelta:
      return {Chunk("agent_thought_chunk", e.reasoning_delta().text())};
    case v1::Event::kUserMessage:
      if (e.user_message().client_name() == own_client_) return {};
      return {Chunk("user_message_chunk", e.user_message().text())};
    case v1::Event::kToolCallStarted: {
      const v1::ToolCallStarted& s = e.tool_call_started();
      calls_[s.call_id()].name = s.name();
      return {Update("tool_call", Json{{"toolCallId", s.call_id()},
                                       {"title", s.name()},
                                       {"kind", ToolKindOf(s.name())},
                                       {"status", "pending"}})};
    }
    case v1::Event::kToolCallReady: {
      const v1::ToolCall& c = e.tool_call_ready().call();
      Call& call = calls_[c.id()];
      const bool announced = !call.name.empty();
      call.name = c.name();
      call.arguments = c.arguments();
      Json f = ToolCallFields(c.id(), c.name(), c.arguments(), cwd_);
      f["status"] = "pending";
      return {Update(announced ? "tool_call_update" : "tool_call", std::move(f))};
    }
    case v1::Event::kToolOutput: {
      const v1::ToolOutput& o = e.tool_output();
      Call& call = calls_[o.call_id()];
      call.output += o.chunk();
      KeepTail(call.output);
      return {Update("tool_call_update", Json{{"toolCallId", o.call_id()},
                                              {"status", "in_progress"},
                                              {"content", TextContent(call.output, true)}})};
    }
    case v1::Event::kToolResult:
      return {Result(e.tool_result())};
    case v1::Event::kApprovalResolved: {
      const v1::ApprovalResolved& r = e.approval_resolved();
      if (r.decision() == v1::DECISION_DENY) return {};  // the ToolResult says failed
      return {
          Update("tool_call_update", Json{{"toolCallId", r.call_id()}, {"status", "in_progress"}})};
    }
    case v1::Event::kPlanUpdated:
      return {PlanUpdate(e.plan_updated())};
    default:
      return {};
  }
}

Json UpdateMapper::PermissionToolCall(const v1::PendingApproval& a) const {
  auto it = calls_.find(a.call_id());
  std::string arguments = it == calls_.end() ? "" : it->second.arguments;
  Json f = ToolCallFields(a.call_id(), a.tool(), arguments, cwd_);
  if (!f.contains("content") && !a.diff().empty()) f["content"] = TextContent(a.diff(), true);
  if (!a.summary().empty()) f["title"] = a.tool() + ": " + a.summary();
  if (a.escalation()) {
    // An editor's question looks like any other: the title and the first text say it leaves
    // the sandbox, and why the model says it must.
    f["title"] = "Outside the sandbox: " + a.summary();
    Json content = TextContent(
        "The agent asks to run this command outside the sandbox, with all your access (files, "
        "network, secrets). Its reason: " +
            (a.justification().empty() ? std::string("(none given)") : a.justification()),
        false);
    if (f.contains("content") && f["content"].is_array()) {
      for (const Json& c : f["content"]) content.push_back(c);
    }
    f["content"] = std::move(content);
  }
  f["status"] = "pending";
  return f;
}

std::vector<Json> UpdateMapper::Replay(const Json& messages) {
  std::vector<Json> out;
  if (!messages.is_array()) return out;
  std::map<std::string, std::string> names;  // call id -> tool
  for (const Json& m : messages) {
    if (!m.is_object()) continue;
    std::string role = GetString(m, "role");
    std::string text = m.contains("content") ? ContentText(m["content"]) : "";
    if (role == "user" && !text.empty()) out.push_back(Chunk("user_message_chunk", text));
    if (role == "assistant") {
      if (!text.empty()) out.push_back(Chunk("agent_message_chunk", text));
      if (!m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
      for (const Json& c : m["tool_calls"]) {
        if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) continue;
        std::string id = GetString(c, "id"), name = GetString(c["function"], "name");
        names[id] = name;
        Json f = ToolCallFields(id, name, GetString(c["function"], "arguments"), cwd_);
        f["status"] = "pending";
        out.push_back(Update("tool_call", std::move(f)));
      }
    }
    if (role == "tool") {
      std::string id = GetString(m, "tool_call_id");
      KeepTail(text);
      out.push_back(
          Update("tool_call_update", Json{{"toolCallId", id},
                                          {"status", "completed"},
                                          {"content", TextContent(text, names[id] == "bash")}}));
    }
  }
  return out;
}

}  // namespace agent::client::acp
