// AnswerFilter: what a one-shot run writes to stdout when stdout is not a terminal. Then
// stdout is the answer only (`git diff | agent "summarize" > notes.md` writes just the
// summary): the text of the turn's last reply, the one without tool calls. The text of a
// reply that calls tools is narration and goes to stderr with the tool trace, and the text of
// an attempt the transport retried is dropped. A reply's text is held until its end says
// which it is (AssistantMessage), or a tool call starts. Pure; one per run; not thread-safe.
#pragma once

#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

class AnswerFilter {
 public:
  struct Out {
    std::string answer;     // for stdout now
    std::string narration;  // for stderr now, before the event's own trace
  };

  // Takes `event` in the order the session sent them; text deltas are held (nothing out).
  Out OnEvent(const agent::v1::Event& event);

 private:
  std::string Take();  // the held text, ending in a newline; empty when nothing is held

  std::string held_;
};

}  // namespace agent::client
