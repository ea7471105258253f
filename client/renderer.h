// Renderer: events -> terminal text. Pure (returns the text to write), so it is tested
// without a terminal. Colour and Markdown touches only when `color` is set (a TTY, no
// NO_COLOR, no --plain). Not thread-safe: one renderer per output stream.
#pragma once

#include <string>

#include "agent/v1/agent.pb.h"
#include "common/json.h"

namespace agent::client {

struct RenderOptions {
  bool color = false;
  int tool_output_lines = 6;  // lines of a tool result shown before "… N more lines"
};

class Renderer {
 public:
  explicit Renderer(RenderOptions options) : options_(options) {}

  std::string Render(const agent::v1::Event& event);
  // The history of a snapshot's transcript, as it would have streamed.
  std::string RenderTranscript(const Json& messages);
  // `→ name(args)`: the one-line form of a tool call.
  std::string CallLine(const std::string& name, const std::string& arguments);
  std::string ApprovalPrompt(const agent::v1::PendingApproval& approval);
  // Ends a line of streamed text if one is open.
  std::string EndLine();

 private:
  std::string Dim(const std::string& s) const;
  std::string Colored(const char* code, const std::string& s) const;
  std::string Clipped(const std::string& text) const;
  std::string Text(const std::string& text);

  RenderOptions options_;
  bool mid_line_ = false;    // the last text written did not end with a newline
  bool in_reasoning_ = false;
};

// Short display form of a call's arguments: the path or command when there is one.
std::string ArgsSummary(const std::string& name, const std::string& arguments);

}  // namespace agent::client
