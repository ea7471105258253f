#include "daemon/context/first_use.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/mutex.h"

namespace agent::daemon::context {
namespace {

constexpr size_t kMaxProjects = 500;

std::string Fingerprint(const Instruction& f) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : f.text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%s:%d:%016x", f.path, f.bytes, h);
}

}  // namespace

bool MarkInstructionsSeen(const std::string& state_file, const std::string& project,
                          const Instructions& instructions) {
  if (instructions.files.empty()) return false;
  static agent::Mutex mu;
  agent::MutexLock l(&mu);
  Json record = Json::object();
  if (auto text = ReadFileToString(state_file); text.ok()) {
    if (auto j = ParseJson(*text); j.ok() && j->is_object()) record = *std::move(j);
  }
  Json& seen = record[project];
  if (!seen.is_array()) seen = Json::array();
  bool fresh = false;
  for (const Instruction& f : instructions.files) {
    std::string fp = Fingerprint(f);
    if (std::find(seen.begin(), seen.end(), Json(fp)) != seen.end()) continue;
    seen.push_back(fp);
    fresh = true;
  }
  if (!fresh) return false;
  while (seen.size() > 50) seen.erase(seen.begin());  // old versions of the files
  if (record.size() > kMaxProjects) record.erase(record.begin());
  (void)WriteFileAtomically(state_file, DumpJson(record, 1) + "\n");
  return true;
}

}  // namespace agent::daemon::context
