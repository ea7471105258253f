#include "daemon/session/events.h"

#include <algorithm>

namespace agent::daemon::events {

namespace v1 = agent::v1;

v1::Event TextDelta(std::string_view text) {
  v1::Event e;
  e.mutable_text_delta()->set_text(std::string(text));
  return e;
}

v1::Event ReasoningDelta(std::string_view text) {
  v1::Event e;
  e.mutable_reasoning_delta()->set_text(std::string(text));
  return e;
}

v1::Event ToolCallStarted(std::string_view call_id, std::string_view name) {
  v1::Event e;
  e.mutable_tool_call_started()->set_call_id(std::string(call_id));
  e.mutable_tool_call_started()->set_name(std::string(name));
  return e;
}

v1::Event Retrying(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) {
  v1::Event e;
  auto* r = e.mutable_retrying();
  r->set_attempt(attempt);
  r->set_max_attempts(max_attempts);
  r->set_delay_ms(delay_ms);
  r->set_reason(std::string(reason));
  return e;
}

v1::Event TurnStarted(const std::string& prompt) {
  v1::Event e;
  e.mutable_turn_started()->set_prompt(prompt);
  return e;
}

v1::Event UserMessage(const std::string& text, const std::string& client) {
  v1::Event e;
  e.mutable_user_message()->set_text(text);
  e.mutable_user_message()->set_client_name(client);
  return e;
}

v1::Event Steered(const std::string& text, const std::string& client, v1::Steered::Stage stage,
                  const std::string& reason) {
  v1::Event e;
  v1::Steered* s = e.mutable_steered();
  s->set_text(text);
  s->set_client_name(client);
  s->set_stage(stage);
  s->set_reason(reason);
  return e;
}

v1::Event TurnEnded(v1::TurnOutcome outcome, const std::string& error) {
  v1::Event e;
  e.mutable_turn_ended()->set_outcome(outcome);
  e.mutable_turn_ended()->set_error(error);
  return e;
}

void AddTally(v1::Event* turn_ended, const TurnTally& tally, int64_t now_ms) {
  v1::TurnEnded* t = turn_ended->mutable_turn_ended();
  if (t->outcome() == v1::TURN_OUTCOME_CANCELLED) t->set_cancelled_by(tally.cancelled_by);
  t->set_duration_ms(tally.started_ms > 0 ? std::max<int64_t>(0, now_ms - tally.started_ms) : 0);
  t->set_denied_calls(tally.denied_calls);
}

v1::Event Usage(int64_t prompt_tokens, int64_t completion_tokens) {
  v1::Event e;
  e.mutable_usage()->set_prompt_tokens(prompt_tokens);
  e.mutable_usage()->set_completion_tokens(completion_tokens);
  return e;
}

v1::Event AssistantMessage(const llm::ModelReply& reply) {
  v1::Event e;
  auto* am = e.mutable_assistant_message();
  am->set_text(reply.content);
  for (const llm::ToolCall& c : reply.tool_calls) {
    auto* tc = am->add_tool_calls();
    tc->set_id(c.id);
    tc->set_name(c.name);
    tc->set_arguments(c.arguments);
  }
  return e;
}

v1::Event ToolCallReady(const llm::ToolCall& call) {
  v1::Event e;
  auto* c = e.mutable_tool_call_ready()->mutable_call();
  c->set_id(call.id);
  c->set_name(call.name);
  c->set_arguments(call.arguments);
  return e;
}

v1::Event ToolOutput(const std::string& call_id, std::string_view chunk, bool is_stderr) {
  v1::Event e;
  auto* o = e.mutable_tool_output();
  o->set_call_id(call_id);
  o->set_chunk(std::string(chunk));
  o->set_stderr(is_stderr);
  return e;
}

v1::Event ToolResult(const llm::ToolCall& call, const std::string& content, bool is_error,
                     bool denied_by_policy) {
  v1::Event e;
  auto* r = e.mutable_tool_result();
  r->set_call_id(call.id);
  r->set_name(call.name);
  r->set_content(content);
  r->set_is_error(is_error);
  r->set_denied_by_policy(denied_by_policy);
  return e;
}

v1::Event ApprovalRequested(const v1::PendingApproval& approval) {
  v1::Event e;
  *e.mutable_approval_requested()->mutable_approval() = approval;
  return e;
}

v1::Event ApprovalResolved(const std::string& call_id, v1::Decision decision,
                           const std::string& client, const std::string& reason,
                           const std::vector<std::string>& rules) {
  v1::Event e;
  auto* r = e.mutable_approval_resolved();
  r->set_call_id(call_id);
  r->set_decision(decision);
  r->set_client_name(client);
  r->set_reason(reason);
  for (const std::string& rule : rules) r->add_rules(rule);
  return e;
}

v1::Event Compacted(int removed_messages, int kept_messages) {
  v1::Event e;
  e.mutable_compacted()->set_removed_messages(removed_messages);
  e.mutable_compacted()->set_kept_messages(kept_messages);
  return e;
}

v1::Event ClientsChanged(const std::vector<std::string>& clients) {
  v1::Event e;
  auto* c = e.mutable_clients_changed();
  for (const std::string& name : clients) c->add_clients(name);
  return e;
}

v1::Event Error(std::string message) {
  v1::Event e;
  e.mutable_error()->set_message(std::move(message));
  return e;
}

}  // namespace agent::daemon::events
