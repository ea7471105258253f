#include "daemon/llm/provider.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/openai_stream.h"
#include "daemon/llm/request_builder.h"
#include "daemon/llm/request_cache.h"
#include "daemon/llm/responses_convert.h"
#include "daemon/llm/responses_stream.h"

namespace agent::daemon::llm {

absl::StatusOr<Provider> ParseProvider(std::string_view setting) {
  const std::string p = absl::AsciiStrToLower(absl::StripAsciiWhitespace(std::string(setting)));
  if (p.empty() || p == "openai") return Provider::kOpenAi;
  if (p == "anthropic") return Provider::kAnthropic;
  if (p == "openai-responses") return Provider::kOpenAiResponses;
  return absl::FailedPreconditionError(absl::StrCat(
      "unknown provider \"", std::string(setting),
      "\": set AGENT_PROVIDER to openai (any OpenAI-compatible server), openai-responses (the "
      "OpenAI Responses API) or anthropic"));
}

absl::StatusOr<WireRequest> BuildWireRequest(const ModelRequest& request) {
  const ModelSettings& m = request.settings;
  if (m.base_url.empty()) {
    return absl::FailedPreconditionError(
        "no model endpoint configured: set AGENT_BASE_URL (an OpenAI-compatible URL such as "
        "https://api.openai.com/v1 or http://localhost:11434/v1) and AGENT_API_KEY");
  }
  if (m.model.empty()) {
    return absl::FailedPreconditionError("no model named: set AGENT_MODEL");
  }
  absl::StatusOr<Provider> provider = ParseProvider(m.provider);
  if (!provider.ok()) return provider.status();
  const bool cloud = absl::StrContains(m.base_url, "api.openai.com") ||
                     absl::StrContains(m.base_url, "anthropic.com");
  if (cloud && m.api_key.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no API key: set AGENT_API_KEY (or OPENAI_API_KEY) for ", m.base_url));
  }

  if (!m.cache_ttl.empty() && m.cache_ttl != "5m" && m.cache_ttl != "1h") {
    return absl::FailedPreconditionError(
        absl::StrCat("unknown cache TTL \"", m.cache_ttl,
                     "\": set AGENT_CACHE_TTL (or \"cache_ttl\") to 5m or 1h"));
  }

  WireRequest wire;
  wire.provider = *provider;
  wire.model = m.model;
  OpenAiRequestOptions openai = OpenAiOptionsFor(m);
  openai.prompt_cache_key = request.cache_key;
  // "5m" is Anthropic's default: sent as no ttl, so both spellings give the same bytes.
  const AnthropicCache cache{.breakpoints = true, .ttl = m.cache_ttl == "1h" ? "1h" : ""};
  wire.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
  Json body;
  const bool prepared = request.prepared != nullptr && request.prepared->provider == *provider;
  if (*provider == Provider::kAnthropic) {
    wire.url = m.base_url + "/messages";
    if (!prepared) {
      body = BuildAnthropicRequest(m.model, request.messages, request.tools, kAnthropicMaxTokens,
                                   /*stream=*/true, cache);
    }
    wire.headers.push_back("anthropic-version: 2023-06-01");
    wire.headers.push_back("x-api-key: " + m.api_key);
  } else if (*provider == Provider::kOpenAiResponses) {
    wire.url = m.base_url + "/responses";
    if (!prepared) {
      body = BuildResponsesRequest(
          m.model, request.messages, request.tools, /*stream=*/true,
          ResponsesRequestOptions{.prompt_cache_key = request.cache_key, .model = m.model});
    }
    if (!m.api_key.empty()) wire.headers.push_back("Authorization: Bearer " + m.api_key);
  } else {
    wire.url = m.base_url + "/chat/completions";
    if (!prepared) {
      body = BuildOpenAiRequest(m.model, request.messages, request.tools, /*stream=*/true, openai);
    }
    if (!m.api_key.empty()) wire.headers.push_back("Authorization: Bearer " + m.api_key);
  }
  wire.body = prepared ? PreparedBody(*request.prepared, m.model, request.tools, openai, cache)
                       : RequestBody(DumpJson(body));
  return wire;
}

std::unique_ptr<StreamAssembler> MakeStreamAssembler(Provider provider, StreamSink* sink,
                                                     size_t max_reply_bytes,
                                                     const std::string& model) {
  if (provider == Provider::kAnthropic) {
    return std::make_unique<AnthropicStreamAssembler>(sink, max_reply_bytes);
  }
  if (provider == Provider::kOpenAiResponses) {
    return std::make_unique<ResponsesStreamAssembler>(sink, max_reply_bytes, model);
  }
  return std::make_unique<OpenAiStreamAssembler>(sink, max_reply_bytes);
}

}  // namespace agent::daemon::llm
