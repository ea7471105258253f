#include "client/text/json_events.h"

#include <cmath>
#include <cstdlib>

#include "common/json.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

bool Is64Bit(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

Json Number(const Json& v, const FieldDescriptor* f) {
  if (!v.is_string()) return v;
  const std::string& s = v.get_ref<const std::string&>();
  char* end = nullptr;
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
    unsigned long long u = std::strtoull(s.c_str(), &end, 10);
    return end != nullptr && *end == '\0' && !s.empty() ? Json(static_cast<uint64_t>(u)) : v;
  }
  long long i = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0' && !s.empty() ? Json(static_cast<int64_t>(i)) : v;
}

// A tool call's arguments as the JSON object they are, not JSON text inside a string; text
// that is not an object (a truncated call) stays the string the model sent.
void ArgumentsAsObject(Json& v) {
  if (!v.is_string()) return;
  absl::StatusOr<Json> parsed = ParseJson(v.get_ref<const std::string&>());
  if (parsed.ok() && parsed->is_object()) v = *std::move(parsed);
}

// Walks the message's descriptor: the 64-bit integers proto3's JSON writes as strings become
// numbers again (a string field that holds digits stays a string), costs are rounded
// (RoundedCost) and tool calls' arguments become objects.
void Unquote64(Json& obj, const Descriptor* d, int depth) {
  if (!obj.is_object() || depth > 32) return;  // the proto nests a few levels; bounded anyway
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const FieldDescriptor* f = d->FindFieldByName(it.key());
    if (f == nullptr || f->is_map()) continue;
    Json& v = it.value();
    if (f->full_name() == "agent.v1.ToolCall.arguments") {
      ArgumentsAsObject(v);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE && f->name() == "cost_usd" &&
               v.is_number()) {
      v = RoundedCost(v.get<double>());
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (v.is_array()) {
        for (Json& e : v) Unquote64(e, f->message_type(), depth + 1);
      } else {
        Unquote64(v, f->message_type(), depth + 1);
      }
    } else if (Is64Bit(f)) {
      if (v.is_array()) {
        for (Json& e : v) e = Number(e, f);
      } else {
        v = Number(v, f);
      }
    }
  }
}

const char* OutcomeName(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_DONE:
      return "done";
    case v1::TURN_OUTCOME_CANCELLED:
      return "cancelled";
    case v1::TURN_OUTCOME_MAX_STEPS:
      return "max_steps";
    case v1::TURN_OUTCOME_ERROR:
      return "error";
    default:
      return "unknown";
  }
}

// As `claude -p --output-format json` names them, where there is a counterpart.
const char* Subtype(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_DONE:
      return "success";
    case v1::TURN_OUTCOME_MAX_STEPS:
      return "error_max_turns";
    case v1::TURN_OUTCOME_CANCELLED:
      return "error_cancelled";
    default:
      return "error_during_execution";
  }
}

// The oneof field set in the event ("text_delta", "tool_result", …), or "unknown".
std::string TypeOf(const v1::Event& e) {
  const google::protobuf::OneofDescriptor* kind = v1::Event::descriptor()->FindOneofByName("kind");
  const FieldDescriptor* f =
      kind == nullptr ? nullptr : e.GetReflection()->GetOneofFieldDescriptor(e, kind);
  return f == nullptr ? "unknown" : f->name();
}

}  // namespace

double RoundedCost(double usd) {
  if (!std::isfinite(usd)) return 0;
  return std::round(usd * 10000) / 10000;
}

std::string SessionStartedJsonLine(const v1::Event& e) {
  const v1::Snapshot& s = e.snapshot();
  Json j = {{"type", "session_started"},
            {"session_id", s.session().id()},
            {"epoch", e.epoch()},
            {"seq", e.seq()},
            {"workdir", s.session().workdir()},
            {"model", s.session().model()},
            {"title", s.session().title()},
            {"message_count", s.session().message_count()}};
  return DumpJson(j);
}

std::string EventJsonLine(const v1::Event& e) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(e, &out, o);
  absl::StatusOr<Json> j = ParseJson(out);
  if (!j.ok()) return out;
  Unquote64(*j, v1::Event::descriptor(), 0);
  (*j)["type"] = TypeOf(e);
  // A child's event is tagged at the top, so a script can follow one child with one key.
  if (e.has_child_progress()) {
    (*j)["child_id"] = e.child_progress().child_id();
  } else if (e.has_approval_requested() &&
             !e.approval_requested().approval().child_session_id().empty()) {
    (*j)["child_id"] = e.approval_requested().approval().child_session_id();
  }
  return DumpJson(*j);
}

std::string ResultJsonLine(const TurnResult& r) {
  const v1::TurnEnded& t = r.ended;
  const v1::Usage& u = t.usage();
  bool ok = t.outcome() == v1::TURN_OUTCOME_DONE;
  Json j = {
      {"type", "result"},
      {"subtype", Subtype(t.outcome())},
      {"is_error", !ok},
      {"outcome", OutcomeName(t.outcome())},
      {"result", r.final_text},
      {"session_id", r.session_id},
      {"usage",
       {{"prompt_tokens", u.prompt_tokens()},
        {"completion_tokens", u.completion_tokens()},
        {"cached_tokens", u.cached_tokens()},
        {"cache_write_tokens", u.cache_write_tokens()},
        {"requests", u.requests()},
        {"retries", u.retries()}}},
      {"total_cost_usd", RoundedCost(u.cost_usd())},
      {"duration_ms", t.duration_ms()},
      {"denied_calls", t.denied_calls()},
      {"exit_code", r.exit_code},
  };
  if (!t.error().empty()) j["error"] = t.error();
  if (!t.cancelled_by().empty()) j["cancelled_by"] = t.cancelled_by();
  return DumpJson(j);
}

}  // namespace agent::client
