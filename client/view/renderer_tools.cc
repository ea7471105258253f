// The Renderer's tool trace: a call's line, its output while it runs (live mode), and its
// result, clipped, under its own call's line when calls ran at once. renderer.cc has the rest.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/view/renderer.h"
#include "client/view/renderer_text.h"

namespace agent::client {

namespace v1 = agent::v1;

std::string Renderer::CallLine(const std::string& name, const std::string& arguments) const {
  return Colored("36",
                 ForTerminal(absl::StrCat("→ ", name, "(", ArgsSummary(name, arguments), ")"))) +
         "\n";
}

std::string Renderer::Clipped(const std::string& text) const {
  std::vector<std::string> lines = absl::StrSplit(Sanitized(text), '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  size_t shown = std::min<size_t>(lines.size(), static_cast<size_t>(options_.tool_output_lines));
  for (size_t i = 0; i < shown; ++i) absl::StrAppend(&out, "  ", OneLine(lines[i], 200), "\n");
  if (lines.size() > shown) {
    absl::StrAppend(&out, "  … ", lines.size() - shown, " more lines (/last shows them)\n");
  }
  return Dim(out);
}

std::string Renderer::WholeOutput(const std::string& name, const std::string& text) const {
  if (name.empty()) return Notice("no tool has run on this screen yet");
  std::string out = Notice(absl::StrCat("the last output, of ", ForTerminal(name), ", whole:"));
  std::vector<std::string> lines = absl::StrSplit(Sanitized(text), '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const std::string& line : lines) absl::StrAppend(&out, "  ", line, "\n");
  return out;
}

std::string Renderer::ToolOutput(const std::string& chunk, RenderState& st) const {
  if (!options_.live) return "";
  st.tool_tail_open_ += Sanitized(chunk);
  size_t nl;
  while ((nl = st.tool_tail_open_.find('\n')) != std::string::npos) {
    st.tool_tail_.push_back(st.tool_tail_open_.substr(0, nl));
    st.tool_tail_open_.erase(0, nl + 1);
    ++st.tool_lines_seen_;
  }
  // The open line of a program that never ends its lines must not grow without bound.
  if (st.tool_tail_open_.size() > 4096) {
    st.tool_tail_open_.erase(0, st.tool_tail_open_.size() - 4096);
  }
  size_t keep = static_cast<size_t>(std::max(1, options_.live_output_lines - 1));
  if (st.tool_tail_.size() > keep) {
    st.tool_tail_.erase(st.tool_tail_.begin(), st.tool_tail_.end() - static_cast<long>(keep));
  }
  return "";
}

std::string Renderer::ToolResult(const v1::ToolResult& r, absl::Time now, RenderState& st) const {
  st.tool_tail_.clear();
  st.tool_tail_open_.clear();
  st.tool_lines_seen_ = 0;
  std::string out = EndLine(st);
  st.markdown_.Reset();
  st.SetPhase(Phase::kThinking, now);
  if (auto it = st.ready_calls_.find(r.call_id()); it != st.ready_calls_.end()) {
    if (r.call_id() != st.last_call_shown_) out += it->second;
    st.ready_calls_.erase(it);
  }
  st.last_call_shown_ = r.call_id();
  if (r.denied_by_policy()) {
    // Refused by the mode or a rule, nobody asked: said as plainly as a person's "no".
    return out + Colored("31", "✗ denied by the policy (nobody was asked)") + "\n" +
           Clipped(r.content());
  }
  return out + Clipped(r.content()) + EditSummary(r.diff());
}

}  // namespace agent::client
