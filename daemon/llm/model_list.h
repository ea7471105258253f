// The provider's model list for `/model` without an argument: GET {base_url}/models with the
// provider's auth (OpenAI: Bearer; Anthropic: x-api-key and anthropic-version), one attempt,
// no redirects (the key goes to base_url only), the body capped. Thread-safe: each call has
// its own handles.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"

namespace agent::daemon::llm {

struct ModelList {
  std::vector<std::string> models;  // ids, sorted, without repeats
  std::string message;              // why `models` is empty, when it is
};

// Blocks up to about `timeout_ms` (the connect included). Every failure is a `message`
// naming the URL: nothing listens, an HTTP error with the server's own text, a provider that
// has no such route (404), a body that is no model list, an empty list.
ModelList ListProviderModels(const ModelSettings& settings, int connect_timeout_ms, int timeout_ms);

// The ids of a /models body: {"data": [{"id": ...}]} (OpenAI, Anthropic, vLLM, Ollama's
// /v1) or {"models": [{"name"|"id": ...}]} (Ollama's /api/tags); sorted, unique. Empty when
// the body is not one of those.
std::vector<std::string> ParseModelIds(std::string_view body);

}  // namespace agent::daemon::llm
