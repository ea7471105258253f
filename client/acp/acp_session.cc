#include "client/acp/acp_session.h"

#include "common/grpc_status.h"
#include "common/person_answer.h"
#include "common/protocol.h"

namespace agent::client::acp {
namespace {

namespace v1 = agent::v1;

constexpr int kStreamId = 1;

const char* StopReason(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_CANCELLED:
      return "cancelled";
    case v1::TURN_OUTCOME_MAX_STEPS:
      return "max_turn_requests";
    default:
      return "end_turn";
  }
}

// The id of the model's question's option `i` (ask_user), read back by QuestionAnswer.
std::string AnswerOptionId(int i) { return "answer-" + std::to_string(i); }

Json PermissionOptions(const v1::PendingApproval& a) {
  Json options = Json::array();
  if (a.has_question()) {
    // ACP asks with a choice of options only: a question the model left open gets "no answer"
    // alone, and a terminal may still answer it in words.
    for (int i = 0; i < a.question().options_size(); ++i) {
      options.push_back(Json{{"optionId", AnswerOptionId(i)},
                             {"name", a.question().options(i)},
                             {"kind", "allow_once"}});
    }
    options.push_back(
        Json{{"optionId", "reject_once"}, {"name", "No answer"}, {"kind", "reject_once"}});
    return options;
  }
  options.push_back(
      Json{{"optionId", "allow_once"}, {"name", "Allow once"}, {"kind", "allow_once"}});
  // What only a person may answer is never made a rule (the daemon refuses it anyway).
  if (!a.requires_person()) {
    std::string name = "Allow always";
    if (a.proposed_rules_size() > 0) name += " (" + a.proposed_rules(0) + ")";
    options.push_back(Json{{"optionId", "allow_always"}, {"name", name}, {"kind", "allow_always"}});
  }
  options.push_back(Json{{"optionId", "reject_once"}, {"name", "Reject"}, {"kind", "reject_once"}});
  return options;
}

}  // namespace

AcpSession::AcpSession(const Connection& daemon, const ClientOptions& o, std::string id,
                       std::string cwd, EditorLink editor)
    : daemon_(daemon),
      o_(o),
      id_(std::move(id)),
      editor_(std::move(editor)),
      mapper_(o.client_name, std::move(cwd)) {}

AcpSession::~AcpSession() = default;

void AcpSession::Attach(std::optional<Json> load_id, Json load_result) {
  load_id_ = std::move(load_id);
  load_result_ = std::move(load_result);
  v1::AttachRequest req;
  req.set_session_id(id_);
  req.set_client_name(o_.client_name);
  req.set_protocol_version(kProtocolVersion);
  req.set_serves_file_text(editor_.reads_files);
  stream_ = std::make_unique<EventStream>(*daemon_.channel, req, mailbox_, kStreamId);
}

void AcpSession::Drain() {
  for (Mailbox::Item& it : mailbox_.Take()) {
    if (it.kind == Mailbox::Item::kEvent) OnEvent(it.event);
    if (it.kind == Mailbox::Item::kEnd) OnEnd(it.status);
  }
}

void AcpSession::Notify(Json update) {
  editor_.send(
      NotificationLine("session/update", Json{{"sessionId", id_}, {"update", std::move(update)}}));
}

void AcpSession::OnEvent(const v1::Event& e) {
  if (e.has_snapshot()) return OnSnapshot(e.snapshot());
  if (e.has_file_text_requested()) return AskFileText(e.file_text_requested());
  if (e.has_user_message() && e.user_message().client_name() == o_.client_name) {
    for (PendingPrompt& p : prompts_) {
      if (!p.started) {
        p.started = true;
        break;
      }
    }
  }
  if (e.has_approval_resolved()) Withdraw(e.approval_resolved().call_id());
  for (Json& u : mapper_.Map(e)) Notify(std::move(u));
  if (e.has_approval_requested()) Ask(e.approval_requested().approval());
  if (e.has_turn_ended()) OnTurnEnded(e.turn_ended());
}

void AcpSession::OnSnapshot(const v1::Snapshot& s) {
  const bool first = !snapshot_seen_;
  snapshot_seen_ = true;
  if (first && load_id_.has_value()) {
    absl::StatusOr<Json> messages = ParseJson(s.transcript_json());
    for (Json& u : mapper_.Replay(messages.ok() ? *messages : Json::array())) Notify(std::move(u));
    if (s.has_plan() && s.plan().steps_size() > 0) {
      v1::Event plan;
      *plan.mutable_plan_updated() = s.plan();
      for (Json& u : mapper_.Map(plan)) Notify(std::move(u));
    }
    if (!s.partial_reasoning().empty()) {
      v1::Event e;
      e.mutable_reasoning_delta()->set_text(s.partial_reasoning());
      for (Json& u : mapper_.Map(e)) Notify(std::move(u));
    }
    if (!s.partial_text().empty()) {
      v1::Event e;
      e.mutable_text_delta()->set_text(s.partial_text());
      for (Json& u : mapper_.Map(e)) Notify(std::move(u));
    }
    editor_.send(ResultLine(*load_id_, load_result_));
    load_id_.reset();
  }
  // A later snapshot replaces events this client fell behind on: a turn of ours that ended
  // meanwhile has its answer here.
  if (!first && s.state() == v1::SESSION_STATE_IDLE) {
    while (!prompts_.empty() && prompts_.front().started) {
      editor_.send(ResultLine(prompts_.front().id, Json{{"stopReason", "end_turn"}}));
      prompts_.pop_front();
    }
  }
  if (s.state() == v1::SESSION_STATE_WAITING_APPROVAL && s.has_pending_approval()) {
    Ask(s.pending_approval());
  }
}

void AcpSession::OnTurnEnded(const v1::TurnEnded& t) {
  if (prompts_.empty() || !prompts_.front().started) return;  // another client's turn
  std::vector<Json> ids = {prompts_.front().id};
  prompts_.pop_front();
  while (!prompts_.empty() && prompts_.front().rides) {  // steers into this turn
    ids.push_back(prompts_.front().id);
    prompts_.pop_front();
  }
  for (const Json& id : ids) {
    if (t.outcome() == v1::TURN_OUTCOME_ERROR) {
      editor_.send(ErrorLine(id, kInternalError, "the turn failed: " + t.error()));
    } else {
      editor_.send(ResultLine(id, Json{{"stopReason", StopReason(t.outcome())}}));
    }
  }
}

void AcpSession::OnEnd(const grpc::Status& status) {
  live_ = false;
  std::string why =
      status.ok() ? "the session was removed" : "lost agentd: " + status.error_message();
  if (load_id_.has_value()) editor_.send(ErrorLine(*load_id_, kInternalError, why));
  load_id_.reset();
  for (const PendingPrompt& p : prompts_) editor_.send(ErrorLine(p.id, kInternalError, why));
  prompts_.clear();
  for (const auto& [call, request] : asks_) {
    editor_.send(NotificationLine("$/cancel_request", Json{{"requestId", request}}));
  }
  asks_.clear();
  asked_calls_.clear();
}

absl::Status AcpSession::Prompt(const Json& id, const PromptText& p) {
  if (!live_) return absl::FailedPreconditionError("the session ended; load it again");
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::SendPromptRequest req = PromptRequest(id_, p.text, o_, o_.model);
  req.set_expand(p.typed_only);
  // A turn of ours runs: this prompt is a course correction for it, as a person typing in
  // the terminal means it.
  const bool ours_runs = !prompts_.empty() && prompts_.front().started;
  if (ours_runs) req.set_delivery(v1::PROMPT_DELIVERY_STEER);
  for (const PromptText::Image& image : p.images) {
    v1::PromptImage* out = req.add_images();
    out->set_media_type(image.media_type);
    out->set_data(image.data);
  }
  v1::SendPromptResponse resp;
  grpc::Status st = daemon_.stub->SendPrompt(&ctx, req, &resp);
  if (!st.ok()) return FromGrpcStatus(st);
  if (resp.steered()) {
    auto after = prompts_.begin() + 1;  // after the running turn's prompt and its riders
    while (after != prompts_.end() && after->rides) ++after;
    prompts_.insert(after, PendingPrompt{id, true, true});
  } else {
    prompts_.push_back(PendingPrompt{id, false});
  }
  for (const std::string& w : resp.warnings()) {
    Notify(Json{{"sessionUpdate", "agent_thought_chunk"},
                {"content", Json{{"type", "text"}, {"text", "(" + w + ")\n"}}}});
  }
  return absl::OkStatus();
}

void AcpSession::Cancel() {
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::CancelRequest req;
  req.set_session_id(id_);
  req.set_client_name(o_.client_name);
  v1::CancelResponse resp;
  (void)daemon_.stub->Cancel(&ctx, req, &resp);  // nothing running is no error for ACP
}

void AcpSession::Ask(const v1::PendingApproval& a) {
  if (asks_.count(a.call_id()) > 0) return;  // asked already (a snapshot repeats it)
  Json params = {{"sessionId", id_},
                 {"toolCall", mapper_.PermissionToolCall(a)},
                 {"options", PermissionOptions(a)}};
  int64_t request = editor_.request("session/request_permission", std::move(params));
  asks_[a.call_id()] = request;
  asked_calls_[request] = a.call_id();
  if (a.has_question()) {
    question_options_[a.call_id()] = {a.question().options().begin(), a.question().options().end()};
  }
}

void AcpSession::Withdraw(const std::string& call_id) {
  question_options_.erase(call_id);
  auto it = asks_.find(call_id);
  if (it == asks_.end()) return;
  editor_.send(NotificationLine("$/cancel_request", Json{{"requestId", it->second}}));
  asked_calls_.erase(it->second);
  asks_.erase(it);
}

void AcpSession::AskFileText(const v1::FileTextRequested& q) {
  if (!editor_.reads_files) return;
  int64_t id = editor_.request("fs/read_text_file", Json{{"sessionId", id_}, {"path", q.path()}});
  file_reads_[id] = q.request_id();
}

void AcpSession::OnFileText(const std::string& daemon_request, const Message& answer) {
  v1::ProvideFileTextRequest req;
  req.set_session_id(id_);
  req.set_request_id(daemon_request);
  // An error (no such buffer, a file it cannot read), or a buffer larger than the daemon uses,
  // answers "none" at once: the daemon reads the disk.
  if (answer.result.is_object() && answer.result.contains("content") &&
      answer.result["content"].is_string() &&
      answer.result["content"].get_ref<const std::string&>().size() <= kMaxEditorTextBytes) {
    req.set_found(true);
    req.set_text(answer.result["content"].get<std::string>());
  }
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::ProvideFileTextResponse resp;
  (void)daemon_.stub->ProvideFileText(&ctx, req, &resp);  // too late: the disk was read
}

void AcpSession::OnEditorAnswer(int64_t request_id, const Message& answer) {
  if (auto f = file_reads_.find(request_id); f != file_reads_.end()) {
    std::string daemon_request = f->second;
    file_reads_.erase(f);
    return OnFileText(daemon_request, answer);
  }
  auto it = asked_calls_.find(request_id);
  if (it == asked_calls_.end()) return;  // answered elsewhere first: too late
  std::string call_id = it->second;
  asked_calls_.erase(it);
  asks_.erase(call_id);
  OnPermissionAnswer(call_id, answer);
  question_options_.erase(call_id);
}

void AcpSession::OnPermissionAnswer(const std::string& call_id, const Message& answer) {
  const Json& outcome = answer.result.is_object() && answer.result.contains("outcome")
                            ? answer.result["outcome"]
                            : Json();
  // An error or "cancelled" answers nothing: the turn is being cancelled, or a terminal
  // may still answer.
  if (!outcome.is_object() || GetString(outcome, "outcome") != "selected") return;
  std::string option = GetString(outcome, "optionId");
  v1::ApproveRequest req;
  req.set_session_id(id_);
  req.set_call_id(call_id);
  req.set_client_name(o_.client_name);
  auto question = question_options_.find(call_id);
  if (question != question_options_.end()) {
    // The model's question: the option's text is the answer.
    req.set_decision(v1::DECISION_DENY);
    req.set_reason("not answered in the editor");
    for (size_t i = 0; i < question->second.size(); ++i) {
      if (option == AnswerOptionId(static_cast<int>(i))) {
        req.set_decision(v1::DECISION_ALLOW_ONCE);
        req.set_reason(question->second[i]);
      }
    }
  } else if (option == "allow_once") {
    req.set_decision(v1::DECISION_ALLOW_ONCE);
  } else if (option == "allow_always") {
    req.set_decision(v1::DECISION_ALLOW_ALWAYS);
  } else {
    req.set_decision(v1::DECISION_DENY);
    req.set_reason("rejected in the editor");
  }
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  // The editor's person chose this option: what only a person may allow, they may.
  ctx.AddMetadata(kPersonAnswerKey, kPersonAnswerValue);
  v1::ApproveResponse resp;
  (void)daemon_.stub->Approve(&ctx, req, &resp);  // already answered elsewhere: first won
}

}  // namespace agent::client::acp
