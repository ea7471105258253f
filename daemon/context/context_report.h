// GetContext's answer: what the session's next request is made of, in tokens. Sizes the
// provider reported for the last request are used where known; the rest is estimated at
// four characters a token. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/context/session_context.h"

namespace agent::daemon::context {

inline int64_t EstimateTokens(int64_t chars) { return (chars + 3) / 4; }

// `messages` is the transcript (its system message first), `tools` the schemas sent.
agent::v1::ContextReport BuildContextReport(const SessionContext& ctx, const Json& messages,
                                            const Json& tools, int64_t context_window);

}  // namespace agent::daemon::context
