// Compaction's model side: asks the model for a summary of the older half of a transcript.
// The cut itself is Transcript::CutPoint/ReplacePrefix, so a call always stays with its
// results. Stateless; the caller serialises use of the ModelClient.
#pragma once

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "common/config.h"
#include "common/json.h"
#include "daemon/llm/model_client.h"

namespace agent::daemon {

// Renders `messages` as plain text (so no tool-call pairing is needed in the request) and
// asks for a summary "for your own future reference". An empty summary is an error.
absl::StatusOr<std::string> Summarize(llm::ModelClient& model, const ModelSettings& settings,
                                      const Json& messages, const std::atomic<bool>* cancelled);

// The user message that stands in for the removed messages.
std::string SummaryMessage(const std::string& summary);

}  // namespace agent::daemon
