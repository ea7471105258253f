#include "daemon/llm/anthropic_convert.h"

#include <string_view>
#include <utility>

#include "daemon/llm/stream_json.h"

namespace agent::daemon::llm {
namespace {

constexpr char kUnparsedKey[] = "_unparsed_arguments";

Json TextBlock(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

// "data:image/png;base64,AAAA" → a base64 source; anything else → a url source.
Json ImageBlock(const std::string& url) {
  constexpr std::string_view kData = "data:";
  constexpr std::string_view kBase64 = ";base64,";
  if (url.rfind(kData, 0) == 0) {
    const size_t marker = url.find(kBase64);
    if (marker != std::string::npos) {
      return {{"type", "image"},
              {"source",
               {{"type", "base64"},
                {"media_type", url.substr(kData.size(), marker - kData.size())},
                {"data", url.substr(marker + kBase64.size())}}}};
    }
  }
  return {{"type", "image"}, {"source", {{"type", "url"}, {"url", url}}}};
}

// Blocks for an OpenAI `content` (string, array of parts, or null).
Json ContentBlocks(const Json& content) {
  Json blocks = Json::array();
  if (content.is_string()) {
    const std::string& text = content.get_ref<const std::string&>();
    if (!text.empty()) blocks.push_back(TextBlock(text));
  } else if (content.is_array()) {
    for (const Json& part : content) {
      const std::string type = GetString(part, "type");
      if (type == "text") {
        const std::string text = GetString(part, "text");
        if (!text.empty()) blocks.push_back(TextBlock(text));
      } else if (type == "image_url") {
        const Json* image = Member(part, "image_url");
        std::string url;
        if (image != nullptr && image->is_string()) url = image->get<std::string>();
        if (image != nullptr && image->is_object()) url = GetString(*image, "url");
        if (!url.empty()) blocks.push_back(ImageBlock(url));
      }
    }
  }
  return blocks;
}

Json ToolUseBlock(const Json& call) {
  const Json* function = Member(call, "function");
  const std::string name = function != nullptr ? GetString(*function, "name") : "";
  std::string arguments;
  if (function != nullptr) {
    const Json* a = Member(*function, "arguments");
    if (a != nullptr && a->is_string()) arguments = a->get<std::string>();
    if (a != nullptr && a->is_object()) arguments = DumpJson(*a);
  }
  Json input = Json::object();
  const bool blank = arguments.find_first_not_of(" \t\r\n") == std::string::npos;
  if (!blank) {
    Json parsed = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded() && parsed.is_object()) {
      input = std::move(parsed);
    } else {
      input[kUnparsedKey] = arguments;  // kept so nothing the model wrote is lost
    }
  }
  return {{"type", "tool_use"}, {"id", GetString(call, "id")}, {"name", name}, {"input", input}};
}

// Appends `blocks` as a message of `role`, merged into the previous one of the same role.
void AppendMessage(Json* messages, const std::string& role, Json blocks) {
  if (blocks.empty()) return;
  if (!messages->empty() && messages->back().value("role", "") == role) {
    Json& content = messages->back()["content"];
    for (Json& b : blocks) content.push_back(std::move(b));
    return;
  }
  messages->push_back({{"role", role}, {"content", std::move(blocks)}});
}

// ---- the inverse ----

std::string ImageUrl(const Json& block) {
  const Json* source = Member(block, "source");
  if (source == nullptr) return "";
  if (GetString(*source, "type") == "base64") {
    return "data:" + GetString(*source, "media_type") + ";base64," + GetString(*source, "data");
  }
  return GetString(*source, "url");
}

Json ArgumentsFromInput(const Json* input) {
  if (input == nullptr || !input->is_object() || input->empty()) return "{}";
  if (input->size() == 1) {
    const Json* raw = Member(*input, kUnparsedKey);
    if (raw != nullptr && raw->is_string()) return *raw;
  }
  return DumpJson(*input);
}

// OpenAI content for user blocks: a string when they are one text, else parts.
Json UserContent(const Json& blocks) {
  if (blocks.size() == 1 && GetString(blocks[0], "type") == "text") {
    return GetString(blocks[0], "text");
  }
  Json parts = Json::array();
  for (const Json& b : blocks) {
    const std::string type = GetString(b, "type");
    if (type == "text") {
      parts.push_back({{"type", "text"}, {"text", GetString(b, "text")}});
    } else if (type == "image") {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", ImageUrl(b)}}}});
    }
  }
  return parts;
}

Json ToolResultContent(const Json* content) {
  if (content == nullptr) return "";
  if (content->is_string()) return *content;
  if (content->is_array()) {
    Json parts = Json::array();
    for (const Json& b : *content) {
      if (GetString(b, "type") == "text") {
        parts.push_back({{"type", "text"}, {"text", GetString(b, "text")}});
      }
    }
    return parts;
  }
  return "";
}

// Each breakpoint of BreakpointMessages on its message's last markable block.
void MarkMessages(Json* messages, const Json& cache_control) {
  for (size_t i : BreakpointMessages(messages->size())) {
    Json& blocks = (*messages)[i]["content"];
    for (size_t k = blocks.size(); k-- > 0;) {
      if (MarkableBlock(blocks[k])) {
        blocks[k]["cache_control"] = cache_control;
        break;
      }
    }
  }
}

}  // namespace

Json CacheControl(const AnthropicCache& cache) {
  Json cc = {{"type", "ephemeral"}};
  if (cache.ttl == "1h") cc["ttl"] = "1h";
  return cc;
}

Json SystemBlocks(const std::string& system, const AnthropicCache& cache) {
  Json block = TextBlock(system);
  if (cache.breakpoints) block["cache_control"] = CacheControl(cache);
  return Json::array({std::move(block)});
}

std::vector<size_t> BreakpointMessages(size_t count) {
  std::vector<size_t> out;
  if (count >= 1) out.push_back(count - 1);
  if (count >= 3) out.push_back(count - 3);
  return out;
}

bool MarkableBlock(const Json& block) {
  const std::string type = GetString(block, "type");
  return type != "thinking" && type != "redacted_thinking";
}

Json BuildAnthropicRequest(const std::string& model, const Json& openai_messages,
                           const Json& openai_tools, int max_tokens, bool stream) {
  return BuildAnthropicRequest(model, openai_messages, openai_tools, max_tokens, stream,
                               AnthropicCache());
}

Json BuildAnthropicRequest(const std::string& model, const Json& openai_messages,
                           const Json& openai_tools, int max_tokens, bool stream,
                           const AnthropicCache& cache) {
  std::string system;
  Json messages = Json::array();
  if (openai_messages.is_array()) {
    for (const Json& m : openai_messages) {
      const std::string role = GetString(m, "role");
      const Json content = m.is_object() ? m.value("content", Json()) : Json();
      if (role == "system" || role == "developer") {
        const std::string text = ContentText(content);
        if (text.empty()) continue;
        if (!system.empty()) system += "\n\n";
        system += text;
      } else if (role == "user") {
        AppendMessage(&messages, "user", ContentBlocks(content));
      } else if (role == "assistant") {
        Json blocks = Json::array();
        if (const Json* thinking = Member(m, "anthropic_thinking");
            thinking != nullptr && thinking->is_array()) {
          for (const Json& b : *thinking) {
            if (b.is_object()) blocks.push_back(b);
          }
        }
        for (Json& b : ContentBlocks(content)) blocks.push_back(std::move(b));
        if (const Json* calls = Member(m, "tool_calls"); calls != nullptr && calls->is_array()) {
          for (const Json& call : *calls) {
            if (call.is_object()) blocks.push_back(ToolUseBlock(call));
          }
        }
        AppendMessage(&messages, "assistant", std::move(blocks));
      } else if (role == "tool") {
        Json result = {{"type", "tool_result"}, {"tool_use_id", GetString(m, "tool_call_id")}};
        if (content.is_string() && !content.get_ref<const std::string&>().empty()) {
          result["content"] = content;
        } else if (content.is_array()) {
          Json blocks = ContentBlocks(content);
          if (!blocks.empty()) result["content"] = std::move(blocks);
        }
        Json blocks = Json::array();
        blocks.push_back(std::move(result));
        AppendMessage(&messages, "user", std::move(blocks));
      }
    }
  }

  if (cache.breakpoints) MarkMessages(&messages, CacheControl(cache));
  Json request = Json::object();
  request["model"] = model;
  request["max_tokens"] = max_tokens;
  if (!system.empty()) {
    request["system"] = cache.breakpoints ? SystemBlocks(system, cache) : Json(system);
  }
  request["messages"] = std::move(messages);
  if (openai_tools.is_array() && !openai_tools.empty()) {
    Json tools = Json::array();
    for (const Json& t : openai_tools) {
      const Json* f = Member(t, "function");
      if (f == nullptr || !f->is_object()) continue;
      Json tool = {{"name", GetString(*f, "name")}};
      const std::string description = GetString(*f, "description");
      if (!description.empty()) tool["description"] = description;
      const Json* params = Member(*f, "parameters");
      tool["input_schema"] =
          (params != nullptr && params->is_object()) ? *params : Json{{"type", "object"}};
      tools.push_back(std::move(tool));
    }
    if (!tools.empty() && cache.breakpoints) tools.back()["cache_control"] = CacheControl(cache);
    if (!tools.empty()) request["tools"] = std::move(tools);
  }
  request["stream"] = stream;
  return request;
}

Json OpenAiMessagesFromAnthropic(const Json& anthropic_request) {
  Json out = Json::array();
  if (const Json* system = Member(anthropic_request, "system")) {
    std::string text;
    if (system->is_string()) text = system->get<std::string>();
    if (system->is_array()) {
      for (const Json& b : *system) text += GetString(b, "text");
    }
    if (!text.empty()) out.push_back({{"role", "system"}, {"content", text}});
  }
  const Json* messages = Member(anthropic_request, "messages");
  if (messages == nullptr || !messages->is_array()) return out;

  for (const Json& m : *messages) {
    const std::string role = GetString(m, "role");
    Json blocks = m.is_object() ? m.value("content", Json()) : Json();
    if (blocks.is_string()) blocks = Json::array({TextBlock(blocks.get<std::string>())});
    if (!blocks.is_array()) continue;

    if (role == "user") {
      Json rest = Json::array();
      for (const Json& b : blocks) {
        if (GetString(b, "type") == "tool_result") {
          out.push_back({{"role", "tool"},
                         {"tool_call_id", GetString(b, "tool_use_id")},
                         {"content", ToolResultContent(Member(b, "content"))}});
        } else {
          rest.push_back(b);
        }
      }
      if (!rest.empty()) out.push_back({{"role", "user"}, {"content", UserContent(rest)}});
    } else if (role == "assistant") {
      std::string text;
      Json calls = Json::array();
      Json thinking = Json::array();
      for (const Json& b : blocks) {
        const std::string type = GetString(b, "type");
        if (type == "text") {
          text += GetString(b, "text");
        } else if (type == "tool_use") {
          calls.push_back({{"id", GetString(b, "id")},
                           {"type", "function"},
                           {"function",
                            {{"name", GetString(b, "name")},
                             {"arguments", ArgumentsFromInput(Member(b, "input"))}}}});
        } else if (type == "thinking" || type == "redacted_thinking") {
          thinking.push_back(b);
        }
      }
      Json msg = {{"role", "assistant"}};
      msg["content"] = (text.empty() && !calls.empty()) ? Json() : Json(text);
      if (!calls.empty()) msg["tool_calls"] = std::move(calls);
      if (!thinking.empty()) msg["anthropic_thinking"] = std::move(thinking);
      out.push_back(std::move(msg));
    }
  }
  return out;
}

}  // namespace agent::daemon::llm
