// Protocol constants shared by agentd and agent. Bump kProtocolVersion whenever the meaning
// of a message or field changes; a client and daemon of different versions refuse politely.
#pragma once

#include <cstddef>

#include "absl/status/status.h"

namespace agent {

// 2: CreateSession and SendPrompt carry the client's ToolEnvironment; a daemon of version 1
// would run tools with its own environment, so a client of 2 must not use it.
// 3: the client's other settings travel with CreateSession/SendPrompt (ClientSettings), and
// a session's tools run in Session.cwd; a daemon of 2 would ignore both.
// 4: SendPrompt may steer the running turn (PromptDelivery); a daemon of 3 would queue a steer
// without a word, so a client of 4 steers only a daemon of 4.
inline constexpr int kProtocolVersion = 4;

// How an Attach stream ends when the daemon is stopped on purpose (`agent daemon stop`):
// the client leaves. Any other end of a daemon going away (UNAVAILABLE, a lost connection)
// is a restart, and an interactive client reconnects.
inline constexpr absl::StatusCode kDaemonStoppedCode = absl::StatusCode::kAborted;

// Events kept per session for Attach(after_seq) replay.
inline constexpr size_t kEventRingSize = 4096;
// A subscriber this far behind is sent a fresh snapshot instead of the backlog.
inline constexpr size_t kMaxQueuedEvents = 1024;
inline constexpr size_t kMaxQueuedBytes = 8 << 20;
// Largest gRPC message either side accepts (a snapshot carries the whole transcript).
inline constexpr int kMaxMessageBytes = 256 << 20;
// Largest editor text (ProvideFileText) the daemon uses; a larger buffer is read from disk.
inline constexpr size_t kMaxEditorTextBytes = 10 << 20;
// A prompt's images (SendPromptRequest.images): at most this many, each at most this size, so
// that its base64 stays within Anthropic's 5 MB per image.
inline constexpr int kMaxPromptImages = 8;
inline constexpr size_t kMaxPromptImageBytes = 3750 * 1024;

}  // namespace agent
