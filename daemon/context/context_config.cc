#include "daemon/context/context_config.h"

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::daemon::context {
namespace {

void Problem(ContextConfig* c, const std::string& what) {
  absl::StrAppend(&c->problem, c->problem.empty() ? "" : "; ", what);
}

}  // namespace

ContextConfig ContextConfigFromJson(const Json& j, const std::string& config_dir) {
  ContextConfig c;
  if (!j.is_object()) return c;
  if (auto it = j.find("instruction_fallbacks"); it != j.end()) {
    std::vector<std::string> names;
    bool ok = it->is_array();
    for (const Json& n : ok ? *it : Json::array()) {
      if (!n.is_string() || n.get<std::string>().empty() ||
          n.get<std::string>().find('/') != std::string::npos) {
        ok = false;
        break;
      }
      names.push_back(n.get<std::string>());
    }
    if (ok) {
      c.instruction_fallbacks = std::move(names);
    } else {
      Problem(&c, "\"instruction_fallbacks\" must be a list of file names");
    }
  }
  if (auto it = j.find("instruction_max_bytes"); it != j.end()) {
    if (it->is_number_integer() && it->get<int64_t>() >= 0) {
      c.instruction_max_bytes = it->get<int64_t>();
    } else {
      Problem(&c, "\"instruction_max_bytes\" must be a number >= 0");
    }
  }
  c.system_prompt_append = GetString(j, "system_prompt_append");
  c.system_prompt_file = GetString(j, "system_prompt_file");
  if (!c.system_prompt_file.empty() && c.system_prompt_file[0] != '/') {
    c.system_prompt_file = config_dir + "/" + c.system_prompt_file;
  }
  if (auto it = j.find("prices"); it != j.end()) {
    absl::StatusOr<PriceTable> prices = PriceTable::FromJson(*it);
    if (prices.ok()) {
      c.prices = *std::move(prices);
    } else {
      Problem(&c, std::string(prices.status().message()));
    }
  }
  return c;
}

ContextConfig LoadContextConfig() {
  const std::string dir = ConfigDir();
  auto text = ReadFileToString(dir + "/config.json");
  if (!text.ok()) return ContextConfig();
  auto j = ParseJson(*text);
  if (!j.ok()) return ContextConfig();  // LoadConfig reports a broken file
  ContextConfig c = ContextConfigFromJson(*j, dir);
  if (!c.problem.empty()) c.problem = absl::StrCat(dir, "/config.json: ", c.problem);
  return c;
}

}  // namespace agent::daemon::context
