// The environment tool commands (bash) run with, and the policy that builds it.
//
// Policy: an allow-list over the environment of the client that asked (so PATH, virtualenvs
// and the user's tools work as in their shell). A variable passes when
//   - the user's `drop` globs do not name it (drop always wins), and
//   - the user's `keep` globs name it (anything, even a secret: the user chose), or it is on
//     the built-in list (kToolEnvAllowed: locale, terminal, paths, build and language tool
//     settings) and its name holds none of KEY, SECRET, TOKEN, PASSWORD or PASSWD (any case)
//     and is not one of the agent's own AGENT_* variables.
// Everything else stays out: credentials come in more shapes than a name filter can know
// (SSH_AUTH_SOCK, DATABASE_URL=postgres://user:pass@..., GOOGLE_APPLICATION_CREDENTIALS,
// DOCKER_AUTH_CONFIG, *_WEBHOOK_URL, COOKIE, proxies with a password). Globs match the whole
// name, case sensitively: `*` is any run of characters, `?` one character.
//
// Config ($XDG_CONFIG_HOME/agent/config.json):  "tool_env": {"keep": [...], "drop": [...]}.
// The client applies the policy before it sends its environment (a secret never crosses the
// socket in that field); the daemon applies it again to whatever arrives (a raw gRPC client
// may send anything). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent {

struct ToolEnvPolicy {
  std::vector<std::string> keep;  // globs of names kept despite the built-in drops
  std::vector<std::string> drop;  // globs of names dropped in addition
};

// Whether a variable's name marks a secret: it contains KEY, SECRET, TOKEN, PASSWORD or PASSWD,
// in any case. Such variables reach neither tools nor the daemon's own environment.
bool NameLooksSecret(std::string_view name);

// The built-in allow-list, as globs (README "Security model" lists it).
const std::vector<std::string>& ToolEnvAllowed();

// Whether a variable called `name` is dropped under `policy`.
bool ToolEnvDrops(std::string_view name, const ToolEnvPolicy& policy);

// `env` ("NAME=value" entries, as in environ) filtered by `policy`, in the same order.
// Entries without '=' or with an empty name are dropped; of a repeated name the first wins
// (as getenv sees it).
std::vector<std::string> BuildToolEnvironment(const std::vector<std::string>& env,
                                              const ToolEnvPolicy& policy);

// Removes the entries whose value is `value` (nothing when it is empty): the API key in use
// never travels as a variable, whatever its name or the user's keep list.
void DropEntriesWithValue(std::vector<std::string>* env, std::string_view value);

// Field by field: `primary`'s non-empty lists, else `fallback`'s (the client's settings win
// over the daemon's config).
ToolEnvPolicy MergeToolEnvPolicy(const ToolEnvPolicy& primary, const ToolEnvPolicy& fallback);

// This process's environment as "NAME=value" entries.
std::vector<std::string> ProcessEnvironment();

// What a command gets when no client environment is known (a raw gRPC client that sent
// none): PATH=/usr/local/bin:/usr/bin:/bin, HOME and LANG (from this process, else the
// password database and C.UTF-8). Never the rest of the daemon's environment.
std::vector<std::string> MinimalToolEnvironment();

}  // namespace agent
