// EditorText: read_file's questions to an editor that holds a file's unsaved text (ACP's
// fs/read_text_file, through `agent acp`). A question goes, as a FileTextRequested event, to
// one client attached with serves_file_text; its ProvideFileText answers it. The reader waits
// briefly: an editor that does not answer, or has no buffer for the file, leaves the disk.
//
// The request ids are random: a process that reaches the daemon's socket cannot answer a
// question it was not sent (and ProvideFileText refuses tools' processes anyway).
//
// Thread-safety: thread-safe; Ask blocks the calling (tool) thread only, never a lock holder.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "common/protocol.h"

namespace agent::daemon {

class EditorText {
 public:
  // How long a read waits for the editor.
  static constexpr absl::Duration kWait = absl::Seconds(5);
  // A larger answer is not used (read_file reads at most this much from disk too).
  static constexpr size_t kMaxTextBytes = kMaxEditorTextBytes;

  // Sends the question through `send` (false: no client to ask, nothing is asked) and waits
  // up to kWait, or until `cancelled`, for the answer. The editor's text, or nullopt.
  std::optional<std::string> Ask(const std::string& path,
                                 const std::function<bool(const agent::v1::Event&)>& send,
                                 const std::atomic<bool>* cancelled);
  // An editor's answer. NotFound when no question with that id waits (answered, timed out,
  // or never asked).
  absl::Status Provide(const std::string& request_id, bool found, std::string text);

 private:
  struct Pending {
    bool answered = false;
    std::optional<std::string> text;
  };
  Mutex mu_;
  CondVar answered_;
  std::map<std::string, std::shared_ptr<Pending>> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon
