#include "daemon/session/compactor.h"

#include "absl/strings/str_cat.h"
#include "common/transcript.h"

namespace agent::daemon {
namespace {

// Tool output can be huge; the summary needs its gist, not every byte.
constexpr size_t kMaxCharsPerMessage = 4000;

std::string Clip(const std::string& s) {
  if (s.size() <= kMaxCharsPerMessage) return s;
  return absl::StrCat(s.substr(0, kMaxCharsPerMessage / 2), "\n[… ", s.size() - kMaxCharsPerMessage,
                      " characters left out …]\n", s.substr(s.size() - kMaxCharsPerMessage / 2));
}

std::string Render(const Json& messages) {
  std::string out;
  for (const Json& m : messages) {
    std::string role = GetString(m, "role");
    // Images appear as "[image]": a summary is text.
    std::string content = m.contains("content") ? ContentAsText(m["content"]) : std::string();
    if (role == "tool") {
      absl::StrAppend(&out, "[tool result ", GetString(m, "tool_call_id"), "]\n", Clip(content),
                      "\n\n");
      continue;
    }
    absl::StrAppend(&out, "[", role, "]\n", Clip(content), "\n");
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
      for (const Json& c : m["tool_calls"]) {
        const Json fn = c.value("function", Json::object());
        absl::StrAppend(&out, "[tool call ", GetString(c, "id"), "] ", GetString(fn, "name"), " ",
                        Clip(GetString(fn, "arguments")), "\n");
      }
    }
    out += "\n";
  }
  return out;
}

// The summary is read from the reply; what streams meanwhile is not shown to anyone.
class DiscardingSink : public llm::StreamSink {
 public:
  void OnText(std::string_view) override {}
  void OnReasoning(std::string_view) override {}
  void OnToolCallStarted(std::string_view, std::string_view) override {}
  void OnRetry(int, int, int64_t, std::string_view) override {}
};

}  // namespace

absl::StatusOr<std::string> Summarize(llm::ModelClient& model, const ModelSettings& settings,
                                      const Json& messages, const std::atomic<bool>* cancelled) {
  llm::ModelRequest req;
  req.settings = settings;
  req.messages = Json::array(
      {{{"role", "system"},
        {"content",
         "You summarise a coding agent's conversation so the agent can continue the work "
         "with only your summary."}},
       {{"role", "user"},
        {"content",
         absl::StrCat(
             "Summarise the conversation below for your own future reference. Keep: the "
             "user's goals and requests, files read or changed (paths, function names, line "
             "numbers), decisions and their reasons, commands run and their outcomes, and "
             "what is still unfinished. Be concise and concrete.\n\n<conversation>\n",
             Render(messages), "</conversation>")}}});
  DiscardingSink sink;
  auto reply = model.Complete(req, &sink, cancelled);
  if (!reply.ok()) return reply.status();
  if (reply->content.empty()) return absl::UnavailableError("the model returned an empty summary");
  return reply->content;
}

std::string SummaryMessage(const std::string& summary) {
  // Worded unlike the request above, so the summary is never mistaken for a new request.
  return "[The earlier part of this conversation was compacted. Your summary of it:]\n" + summary;
}

}  // namespace agent::daemon
