#include "daemon/llm/request_builder.h"

#include "absl/strings/match.h"

namespace agent::daemon::llm {
namespace {

bool HasText(const Json& content) {
  if (content.is_string()) return !content.get_ref<const std::string&>().empty();
  if (content.is_array()) return !content.empty();
  return false;
}

}  // namespace

Json OutgoingOpenAiMessage(const Json& message, const OpenAiRequestOptions& options) {
  if (!message.is_object()) return message;
  Json out = message;
  out.erase("anthropic_thinking");
  out.erase("openai_reasoning");
  out.erase("openai_reasoning_model");
  if (!options.send_reasoning_content) out.erase("reasoning_content");
  auto refusal = out.find("refusal");
  if (refusal != out.end()) {
    if (refusal->is_string() && !refusal->get_ref<const std::string&>().empty() &&
        !HasText(out.value("content", Json())) && !out.contains("tool_calls")) {
      out["content"] = *refusal;
    }
    out.erase("refusal");
  }
  return out;
}

OpenAiRequestOptions OpenAiOptionsFor(const ModelSettings& settings) {
  OpenAiRequestOptions options;
  options.send_reasoning_content = absl::StrContains(settings.base_url, "deepseek");
  options.model = settings.model;
  return options;
}

Json BuildOpenAiRequest(const std::string& model, const Json& messages, const Json& tools,
                        bool stream) {
  return BuildOpenAiRequest(model, messages, tools, stream, OpenAiRequestOptions());
}

Json BuildOpenAiRequest(const std::string& model, const Json& messages, const Json& tools,
                        bool stream, const OpenAiRequestOptions& options) {
  Json request = Json::object();
  request["model"] = model;
  Json out_messages = Json::array();
  if (messages.is_array()) {
    for (const Json& m : messages) out_messages.push_back(OutgoingOpenAiMessage(m, options));
  }
  request["messages"] = std::move(out_messages);
  if (tools.is_array() && !tools.empty()) request["tools"] = tools;
  if (!options.prompt_cache_key.empty()) request["prompt_cache_key"] = options.prompt_cache_key;
  request["stream"] = stream;
  if (stream) request["stream_options"] = {{"include_usage", true}};
  return request;
}

Json AssistantMessageFromReply(const ModelReply& reply) {
  Json msg = Json::object();
  msg["role"] = "assistant";
  if (reply.content.empty() && !reply.tool_calls.empty()) {
    msg["content"] = nullptr;
  } else {
    msg["content"] = reply.content;
  }
  if (!reply.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& call : reply.tool_calls) {
      Json c = {{"id", call.id},
                {"type", "function"},
                {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
      if (call.extra.is_object()) {
        for (auto it = call.extra.begin(); it != call.extra.end(); ++it) {
          if (!c.contains(it.key())) c[it.key()] = *it;
        }
      }
      calls.push_back(std::move(c));
    }
    msg["tool_calls"] = std::move(calls);
  }
  if (!reply.reasoning.empty()) msg["reasoning_content"] = reply.reasoning;
  if (!reply.refusal.empty()) msg["refusal"] = reply.refusal;
  if (reply.provider_fields.is_object()) {
    for (auto it = reply.provider_fields.begin(); it != reply.provider_fields.end(); ++it) {
      const std::string& key = it.key();
      if (key == "role" || key == "content" || key == "tool_calls") continue;
      msg[key] = *it;
    }
  }
  return msg;
}

}  // namespace agent::daemon::llm
