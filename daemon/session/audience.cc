#include "daemon/session/audience.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "common/protocol.h"
#include "daemon/session/events.h"

namespace agent::daemon {

Audience::Audience(std::string epoch, const Clock* clock)
    : log_(std::move(epoch), kEventRingSize, kEventRingMaxBytes, clock) {}

void Audience::Emit(agent::v1::Event event) { log_.Append(std::move(event)); }

void Audience::Attach(Subscriber* sub, const std::string& name, bool read_only,
                      bool serves_file_text, const std::string& epoch, uint64_t after_seq,
                      const std::function<agent::v1::Event()>& snapshot) {
  if (auto missed = log_.Since(epoch, after_seq); missed.has_value()) {
    for (const EventPtr& e : *missed) sub->Deliver(e);
  } else {
    sub->Deliver(std::make_shared<const agent::v1::Event>(snapshot()));
  }
  log_.Subscribe(sub);
  clients_.push_back({sub, name, read_only, serves_file_text});
  Emit(events::ClientsChanged(names()));
}

bool Audience::Detach(Subscriber* sub) {
  log_.Unsubscribe(sub);
  auto it =
      std::find_if(clients_.begin(), clients_.end(), [&](const Client& c) { return c.sub == sub; });
  if (it == clients_.end()) return false;
  clients_.erase(it);
  Emit(events::ClientsChanged(names()));
  return true;
}

bool Audience::IsReadOnly(const std::string& name) const {
  return std::any_of(clients_.begin(), clients_.end(),
                     [&](const Client& c) { return c.read_only && c.name == name; });
}

std::vector<std::string> Audience::names() const {
  std::vector<std::string> names;
  names.reserve(clients_.size());
  for (const Client& c : clients_) names.push_back(c.name);
  return names;
}

void Audience::EndAll(const absl::Status& status) {
  for (const Client& c : clients_) c.sub->End(status);
}

bool Audience::AskEditor(const agent::v1::Event& event) {
  for (const Client& c : clients_) {
    if (!c.serves_file_text) continue;
    c.sub->Deliver(std::make_shared<const agent::v1::Event>(event));
    return true;
  }
  return false;
}

}  // namespace agent::daemon
