#include "daemon/llm/responses_convert.h"

#include <utility>

#include "daemon/llm/stream_json.h"

namespace agent::daemon::llm {
namespace {

Json TextPart(const char* type, const std::string& text) {
  return {{"type", type}, {"text", text}};
}

// Parts of a user message: input_text and input_image.
Json UserParts(const Json& content) {
  Json parts = Json::array();
  if (content.is_string()) {
    const std::string& text = content.get_ref<const std::string&>();
    if (!text.empty()) parts.push_back(TextPart("input_text", text));
    return parts;
  }
  if (!content.is_array()) return parts;
  for (const Json& part : content) {
    const std::string type = GetString(part, "type");
    if (type == "text") {
      const std::string text = GetString(part, "text");
      if (!text.empty()) parts.push_back(TextPart("input_text", text));
    } else if (type == "image_url") {
      const Json* image = Member(part, "image_url");
      std::string url;
      if (image != nullptr && image->is_string()) url = image->get<std::string>();
      if (image != nullptr && image->is_object()) url = GetString(*image, "url");
      if (!url.empty()) {
        parts.push_back({{"type", "input_image"}, {"image_url", url}, {"detail", "auto"}});
      }
    }
  }
  return parts;
}

Json FunctionCallItem(const Json& call) {
  const Json* function = Member(call, "function");
  std::string name;
  std::string arguments;
  if (function != nullptr) {
    name = GetString(*function, "name");
    const Json* a = Member(*function, "arguments");
    if (a != nullptr && a->is_string()) arguments = a->get<std::string>();
    if (a != nullptr && a->is_object()) arguments = DumpJson(*a);
  }
  if (arguments.empty()) arguments = "{}";
  return {{"type", "function_call"},
          {"call_id", GetString(call, "id")},
          {"name", name},
          {"arguments", arguments}};
}

}  // namespace

Json ResponsesInputItems(const Json& message, const std::string& model) {
  Json items = Json::array();
  if (!message.is_object()) return items;
  const std::string role = GetString(message, "role");
  const Json content = message.value("content", Json());
  if (role == "system" || role == "developer") {
    const std::string text = ContentText(content);
    if (!text.empty()) {
      items.push_back({{"type", "message"},
                       {"role", role},
                       {"content", Json::array({TextPart("input_text", text)})}});
    }
  } else if (role == "user") {
    Json parts = UserParts(content);
    if (!parts.empty()) {
      items.push_back({{"type", "message"}, {"role", "user"}, {"content", std::move(parts)}});
    }
  } else if (role == "assistant") {
    const std::string made_by = GetString(message, kOpenAiReasoningModelField);
    const bool readable = made_by.empty() || model.empty() || made_by == model;
    if (const Json* reasoning = Member(message, kOpenAiReasoningField);
        readable && reasoning != nullptr && reasoning->is_array()) {
      for (const Json& item : *reasoning) {
        if (item.is_object()) items.push_back(item);
      }
    }
    std::string text = ContentText(content);
    const Json* calls = Member(message, "tool_calls");
    const bool has_calls = calls != nullptr && calls->is_array() && !calls->empty();
    if (text.empty() && !has_calls) text = GetString(message, "refusal");
    if (!text.empty()) {
      items.push_back({{"type", "message"},
                       {"role", "assistant"},
                       {"content", Json::array({TextPart("output_text", text)})}});
    }
    if (has_calls) {
      for (const Json& call : *calls) {
        if (call.is_object()) items.push_back(FunctionCallItem(call));
      }
    }
  } else if (role == "tool") {
    items.push_back({{"type", "function_call_output"},
                     {"call_id", GetString(message, "tool_call_id")},
                     {"output", ContentText(content)}});
  }
  return items;
}

Json ResponsesTools(const Json& openai_tools) {
  Json tools = Json::array();
  if (!openai_tools.is_array()) return tools;
  for (const Json& t : openai_tools) {
    const Json* f = Member(t, "function");
    if (f == nullptr || !f->is_object()) continue;
    Json tool = {{"type", "function"}, {"name", GetString(*f, "name")}, {"strict", false}};
    const std::string description = GetString(*f, "description");
    if (!description.empty()) tool["description"] = description;
    const Json* params = Member(*f, "parameters");
    tool["parameters"] =
        (params != nullptr && params->is_object()) ? *params : Json{{"type", "object"}};
    tools.push_back(std::move(tool));
  }
  return tools;
}

Json BuildResponsesRequest(const std::string& model, const Json& messages, const Json& tools,
                           bool stream, const ResponsesRequestOptions& options) {
  Json request = Json::object();
  request["model"] = model;
  Json input = Json::array();
  if (messages.is_array()) {
    for (const Json& m : messages) {
      for (Json& item : ResponsesInputItems(m, options.model)) input.push_back(std::move(item));
    }
  }
  request["input"] = std::move(input);
  // Stateless: nothing is kept on OpenAI's side, so the reasoning comes back encrypted and we
  // send it again with the next request.
  request["store"] = false;
  request["include"] = Json::array({"reasoning.encrypted_content"});
  Json out_tools = ResponsesTools(tools);
  if (!out_tools.empty()) request["tools"] = std::move(out_tools);
  if (!options.prompt_cache_key.empty()) request["prompt_cache_key"] = options.prompt_cache_key;
  request["stream"] = stream;
  return request;
}

Json ChatMessagesFromResponsesInput(const Json& items) {
  Json out = Json::array();
  if (!items.is_array()) return out;
  Json reasoning = Json::array();
  // The assistant message of the current run of assistant items, if still open.
  bool assistant_open = false;
  auto open_assistant = [&]() -> Json& {
    if (!assistant_open) {
      out.push_back({{"role", "assistant"}, {"content", nullptr}});
      assistant_open = true;
    }
    Json& msg = out.back();
    if (!reasoning.empty()) {
      Json& kept = msg[kOpenAiReasoningField];
      if (!kept.is_array()) kept = Json::array();
      for (Json& r : reasoning) kept.push_back(std::move(r));
      reasoning = Json::array();
    }
    return msg;
  };
  for (const Json& item : items) {
    const std::string type = GetString(item, "type", "message");
    if (type == "reasoning") {
      assistant_open = false;  // a message's reasoning comes before its other items
      reasoning.push_back(item);
    } else if (type == "function_call") {
      Json& msg = open_assistant();
      if (!msg.contains("tool_calls")) msg["tool_calls"] = Json::array();
      msg["tool_calls"].push_back(
          {{"id", GetString(item, "call_id")},
           {"type", "function"},
           {"function",
            {{"name", GetString(item, "name")}, {"arguments", GetString(item, "arguments")}}}});
    } else if (type == "function_call_output") {
      assistant_open = false;
      out.push_back({{"role", "tool"},
                     {"tool_call_id", GetString(item, "call_id")},
                     {"content", GetString(item, "output")}});
    } else if (type == "message") {
      const std::string role = GetString(item, "role");
      std::string text;
      if (const Json* content = Member(item, "content")) {
        if (content->is_string()) text = content->get<std::string>();
        if (content->is_array()) {
          for (const Json& part : *content) text += GetString(part, "text");
        }
      }
      if (role == "assistant") {
        if (assistant_open && out.back().contains("tool_calls")) assistant_open = false;
        Json& msg = open_assistant();
        msg["content"] = GetString(msg, "content") + text;
      } else {
        assistant_open = false;
        out.push_back({{"role", role}, {"content", text}});
      }
    }
  }
  return out;
}

}  // namespace agent::daemon::llm
