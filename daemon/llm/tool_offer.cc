#include "daemon/llm/tool_offer.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace agent::daemon::llm {
namespace {

constexpr size_t kNamesShown = 10;

std::string LeftOutNotice(const std::vector<std::string>& names, const ToolOffer::Limits& l) {
  if (names.empty()) return "every tool is offered to the model again";
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + std::min(names.size(), kNamesShown));
  std::string list = absl::StrJoin(shown, ", ");
  if (names.size() > shown.size())
    absl::StrAppend(&list, " and ", names.size() - shown.size(), " more");
  return absl::StrCat(names.size(), " tool", names.size() == 1 ? " is" : "s are",
                      " not offered to the model (at most ", l.max_tools, " tools and ",
                      l.max_bytes / 1024, " KiB of definitions per request): ", list,
                      ". Remove the MCP servers this project does not need, or choose a "
                      "server's tools with \"enabled_tools\" or \"disabled_tools\" in its "
                      "definition, to offer the rest.");
}

}  // namespace

std::string ToolName(const Json& schema) {
  if (!schema.is_object()) return "";
  auto f = schema.find("function");
  return f == schema.end() ? "" : GetString(*f, "name");
}

Json ToolOffer::Arrange(const Json& schemas, std::string* notice) {
  notice->clear();
  std::map<std::string, const Json*> by_name;
  std::vector<std::string> core, mcp;
  if (schemas.is_array()) {
    for (const Json& s : schemas) {
      const std::string name = ToolName(s);
      if (!by_name.emplace(name, &s).second) continue;  // a registry has unique names
      const bool known = std::find(order_.begin(), order_.end(), name) != order_.end();
      if (!known) (absl::StartsWith(name, "mcp__") ? mcp : core).push_back(name);
    }
  }
  std::erase_if(order_, [&](const std::string& n) { return by_name.count(n) == 0; });
  std::sort(mcp.begin(), mcp.end());
  order_.insert(order_.end(), core.begin(), core.end());
  order_.insert(order_.end(), mcp.begin(), mcp.end());

  Json out = Json::array();
  std::vector<std::string> left_out;
  size_t bytes = 0;
  for (const std::string& name : order_) {
    const Json& schema = *by_name[name];
    const size_t size = DumpJson(schema).size();
    // Once one is left out, so is every later one: what is offered stays a prefix.
    if (!left_out.empty() || out.size() >= limits_.max_tools || bytes + size > limits_.max_bytes) {
      left_out.push_back(name);
      continue;
    }
    bytes += size;
    out.push_back(schema);
  }
  if (left_out != left_out_) {
    *notice = LeftOutNotice(left_out, limits_);
    left_out_ = std::move(left_out);
  }
  return out;
}

}  // namespace agent::daemon::llm
