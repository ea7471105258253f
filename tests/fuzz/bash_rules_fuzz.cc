// Fuzzes the bash command splitter and analysis behind permission rules: they never crash or
// hang; the rules proposed for a command allow that command (and are not wider than asked: a
// proposal never contains an unescaped wildcard); the same rules as deny rules deny it; and
// deny evaluation through wrappers and shell strings terminates; the prefix rules proposed
// first (`git status *`) allow the command too. The input is also read as a
// settings file, whose parser must fail with a status, never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/json.h"
#include "daemon/policy/rules.h"
#include "daemon/policy/rules_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace policy = agent::daemon::policy;
  std::string command(reinterpret_cast<const char*>(data), size);
  (void)policy::SplitCompoundCommand(command);
  (void)policy::ParseRulesText(command, "fuzz.json");
  agent::Json args{{"command", command}};
  if (args.dump(-1, ' ', false, agent::Json::error_handler_t::replace).empty()) return 0;

  policy::RuleSet wide;
  wide.allow.push_back(policy::Rule{"bash", ""});
  wide.deny.push_back(policy::Rule{"bash", "rm *"});
  (void)policy::Evaluate(wide, "bash", args);

  std::vector<std::string> proposed = policy::ProposeRules("bash", args);
  if (proposed.empty()) return 0;
  policy::RuleSet rules;
  for (const std::string& r : proposed) {
    auto rule = policy::ParseRule(r);
    if (!rule.ok()) __builtin_trap();  // a proposal must be a valid rule
    rules.allow.push_back(*rule);
  }
  if (policy::Evaluate(rules, "bash", args) != policy::Verdict::kAllow) __builtin_trap();
  // Deny rules see at least every part an allow decision needs.
  policy::RuleSet denied;
  denied.allow.push_back(policy::Rule{"bash", ""});
  denied.deny = rules.allow;
  if (policy::Evaluate(denied, "bash", args) != policy::Verdict::kDeny) __builtin_trap();
  // The prefix rules "always" proposes first allow the command they were proposed for too.
  policy::RuleSet prefixed;
  for (const std::string& r : policy::ProposePrefixRules("bash", args)) {
    auto rule = policy::ParseRule(r);
    if (!rule.ok()) __builtin_trap();
    prefixed.allow.push_back(*rule);
  }
  if (policy::Evaluate(prefixed, "bash", args) != policy::Verdict::kAllow) __builtin_trap();
  return 0;
}
