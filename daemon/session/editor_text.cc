#include "daemon/session/editor_text.h"

#include <chrono>

#include "daemon/base/random_id.h"

namespace agent::daemon {

std::optional<std::string> EditorText::Ask(const std::string& path,
                                           const std::function<bool(const agent::v1::Event&)>& send,
                                           const std::atomic<bool>* cancelled) {
  const std::string id = RandomHexId(2);
  auto pending = std::make_shared<Pending>();
  {
    MutexLock l(&mu_);
    pending_[id] = pending;
  }
  agent::v1::Event e;
  e.mutable_file_text_requested()->set_request_id(id);
  e.mutable_file_text_requested()->set_path(path);
  std::optional<std::string> text;
  if (send(e)) {
    const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(kWait);
    MutexLock l(&mu_);
    while (!pending->answered && std::chrono::steady_clock::now() < deadline &&
           !(cancelled != nullptr && cancelled->load())) {
      // In slices, to see a cancel: the turn's Ctrl-C must not wait for a silent editor.
      answered_.WaitWithTimeout(&mu_, absl::Milliseconds(50));
    }
    text = std::move(pending->text);
  }
  MutexLock l(&mu_);
  pending_.erase(id);
  return text;
}

absl::Status EditorText::Provide(const std::string& request_id, bool found, std::string text) {
  MutexLock l(&mu_);
  auto it = pending_.find(request_id);
  if (it == pending_.end() || it->second->answered) {
    return absl::NotFoundError("no file text was asked for with that id (it may have timed out)");
  }
  it->second->answered = true;
  if (found && text.size() <= kMaxTextBytes) it->second->text = std::move(text);
  answered_.SignalAll();
  return absl::OkStatus();
}

}  // namespace agent::daemon
