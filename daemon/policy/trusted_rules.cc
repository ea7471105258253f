#include "daemon/policy/trusted_rules.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/paths.h"

namespace agent::daemon::policy {
namespace {

Mutex& StoreMutex() {
  static Mutex* mu = new Mutex;
  return *mu;
}

// The canonical forms of `rules`, in order and without repeats.
absl::StatusOr<std::vector<std::string>> Canonical(const std::vector<std::string>& rules) {
  std::vector<std::string> out;
  for (const std::string& text : rules) {
    absl::StatusOr<Rule> rule = ParseRule(text);
    if (!rule.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(text, ": ", rule.status().message()));
    }
    std::string key = CanonicalRule(*rule);
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  }
  return out;
}

// The rules recorded for `project` when they were recorded for the directory `identity`
// names; none for an entry of another directory or of an older version (a bare list).
std::vector<std::string> ListOf(const Json& projects, const std::string& project,
                                const std::string& identity) {
  std::vector<std::string> out;
  auto it = projects.find(project);
  if (it == projects.end() || !it->is_object()) return out;
  auto id = it->find("identity");
  auto rules = it->find("rules");
  if (id == it->end() || !id->is_string() || id->get<std::string>() != identity ||
      rules == it->end() || !rules->is_array()) {
    return out;
  }
  for (const Json& r : *rules) {
    if (r.is_string()) out.push_back(r.get<std::string>());
  }
  return out;
}

Json Entry(const std::string& identity, const std::vector<std::string>& rules) {
  return Json{{"identity", identity}, {"rules", rules}};
}

// `text` with its control characters visible (`^[`, `\u009b`): rules are repository content
// and the notice reaches terminals.
std::string Visible(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c < 0x20 || c == 0x7f) {
      out += '^';
      out += static_cast<char>(c ^ 0x40);
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // a C1 control in UTF-8
      out += absl::StrCat("\\u00", absl::Hex(next, absl::kZeroPad2));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

Json ReadTrustStoreProjects(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return Json::object();
  absl::StatusOr<Json> j = ParseJson(*text);
  if (!j.ok() || !j->is_object()) return Json::object();
  auto it = j->find("projects");
  if (it == j->end() || !it->is_object()) return Json::object();
  return *it;
}

absl::Status WriteTrustStoreProjects(const std::string& path, const Json& projects) {
  const std::string dir = path.substr(0, path.rfind('/'));
  if (auto s = MakeDirs(dir.empty() ? "/" : dir); !s.ok()) return s;
  return WriteFileAtomically(path, DumpJson(Json{{"projects", projects}}, 2) + "\n");
}

std::string TrustedRulesPath() { return StateDir() + "/trusted-rules.json"; }

std::string ProjectIdentity(const std::string& project) {
  struct statx st;
  if (::statx(AT_FDCWD, project.c_str(), 0, STATX_INO | STATX_BTIME, &st) != 0) return "";
  std::string id = absl::StrCat(st.stx_dev_major, ",", st.stx_dev_minor, ":", st.stx_ino);
  if ((st.stx_mask & STATX_BTIME) != 0) {
    absl::StrAppend(&id, ":", st.stx_btime.tv_sec, ".",
                    absl::Dec(st.stx_btime.tv_nsec, absl::kZeroPad9));
  }
  return id;
}

std::set<std::string> TrustedRulesFromText(std::string_view text, const std::string& project,
                                           const std::string& identity) {
  std::set<std::string> out;
  absl::StatusOr<Json> j = ParseJson(text);
  if (!j.ok() || !j->is_object()) return out;
  auto it = j->find("projects");
  if (it == j->end() || !it->is_object()) return out;
  for (std::string& r : ListOf(*it, project, identity)) out.insert(std::move(r));
  return out;
}

absl::StatusOr<std::vector<std::string>> TrustRules(const std::string& path,
                                                    const std::string& project,
                                                    const std::vector<std::string>& rules) {
  absl::StatusOr<std::vector<std::string>> add = Canonical(rules);
  if (!add.ok() || add->empty()) return add;
  const std::string identity = ProjectIdentity(project);
  MutexLock l(&StoreMutex());
  Json projects = ReadTrustStoreProjects(path);
  std::vector<std::string> list = ListOf(projects, project, identity);
  // Another directory's (or an older version's) entry at this path is replaced.
  bool changed = !projects.contains(project) || list.empty();
  for (const std::string& r : *add) {
    if (std::find(list.begin(), list.end(), r) != list.end()) continue;
    list.push_back(r);
    changed = true;
  }
  if (changed) {
    projects[project] = Entry(identity, list);
    if (auto s = WriteTrustStoreProjects(path, projects); !s.ok()) return s;
  }
  return add;
}

absl::StatusOr<std::vector<std::string>> RevokeRules(const std::string& path,
                                                     const std::string& project,
                                                     const std::vector<std::string>& rules) {
  absl::StatusOr<std::vector<std::string>> drop = Canonical(rules);
  if (!drop.ok()) return drop.status();
  const std::string identity = ProjectIdentity(project);
  MutexLock l(&StoreMutex());
  Json projects = ReadTrustStoreProjects(path);
  std::vector<std::string> kept;
  std::vector<std::string> dropped;
  for (std::string& r : ListOf(projects, project, identity)) {
    const bool match = drop->empty() || std::find(drop->begin(), drop->end(), r) != drop->end();
    (match ? dropped : kept).push_back(std::move(r));
  }
  if (dropped.empty()) return dropped;
  if (kept.empty()) {
    projects.erase(project);
  } else {
    projects[project] = Entry(identity, kept);
  }
  if (auto s = WriteTrustStoreProjects(path, projects); !s.ok()) return s;
  return dropped;
}

std::vector<std::string> UntrustedAllowRules(const RuleSet& rules,
                                             const std::set<std::string>& trusted) {
  std::vector<std::string> out;
  for (const Rule& r : rules.allow) {
    if (trusted.count(CanonicalRule(r)) == 0) out.push_back(FormatRule(r));
  }
  return out;
}

std::string UntrustedRulesNotice(const std::string& settings_path,
                                 const std::vector<std::string>& untrusted) {
  if (untrusted.empty()) return "";
  std::vector<std::string> shown;
  for (const std::string& r : untrusted) shown.push_back(Visible(r));
  return absl::StrCat(
      Visible(settings_path), " allows ", untrusted.size(),
      " rule(s) you have not trusted for this project: ", absl::StrJoin(shown, ", "),
      ". They are ignored; `agent trust` (or /trust) trusts them.");
}

}  // namespace agent::daemon::policy
