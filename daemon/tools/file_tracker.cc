#include "daemon/tools/file_tracker.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {

uint64_t FileTracker::Hash(std::string_view content) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : content) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void FileTracker::RecordRead(const std::string& abs_path, std::string_view content) {
  Seen seen{Hash(content), content.size()};
  agent::MutexLock lock(&mu_);
  seen_[abs_path] = seen;
}

Json FileTracker::ToJson() const {
  Json out = Json::object();
  agent::MutexLock lock(&mu_);
  for (const auto& [path, seen] : seen_) {
    if (out.size() >= kMaxKept) break;
    out[path] = {{"hash", absl::StrCat(absl::Hex(seen.hash, absl::kZeroPad16))},
                 {"size", seen.size}};
  }
  return out;
}

void FileTracker::LoadJson(const Json& j, const std::string& workdir) {
  if (!j.is_object() || workdir.empty()) return;
  const std::string inside = workdir.back() == '/' ? workdir : workdir + "/";
  agent::MutexLock lock(&mu_);
  for (const auto& [path, v] : j.items()) {
    if (seen_.size() >= kMaxKept) break;
    if (path.size() <= inside.size() || path.compare(0, inside.size(), inside) != 0) continue;
    if (!v.is_object() || !v.contains("hash") || !v["hash"].is_string() || !v.contains("size") ||
        !v["size"].is_number_unsigned()) {
      continue;
    }
    uint64_t hash = 0;
    if (!absl::SimpleHexAtoi(v["hash"].get<std::string>(), &hash)) continue;
    seen_[path] = Seen{hash, v["size"].get<uint64_t>()};
  }
}

void FileTracker::RecordWrite(const std::string& abs_path, std::string_view content) {
  RecordRead(abs_path, content);
}

bool FileTracker::HasSeen(const std::string& abs_path) const {
  agent::MutexLock lock(&mu_);
  return seen_.count(abs_path) != 0;
}

void FileTracker::Forget(const std::string& abs_path) {
  agent::MutexLock lock(&mu_);
  seen_.erase(abs_path);
}

absl::Status FileTracker::CheckUnchanged(const std::string& abs_path, bool must_have_read,
                                         std::string_view display) const {
  const std::string name = display.empty() ? abs_path : std::string(display);
  absl::StatusOr<std::string> current = ReadRegularFile(abs_path, kMaxTextFileBytes, name);
  if (absl::IsNotFound(current.status())) return absl::OkStatus();
  if (!current.ok()) return current.status();
  return CheckKnown(abs_path, *current, must_have_read, name);
}

absl::Status FileTracker::CheckKnown(const std::string& abs_path, std::string_view current,
                                     bool must_have_read, std::string_view display) const {
  const absl::string_view name = display.empty() ? AbslView(abs_path) : AbslView(display);
  std::optional<Seen> seen;
  {
    agent::MutexLock lock(&mu_);
    auto it = seen_.find(abs_path);
    if (it != seen_.end()) seen = it->second;
  }
  if (!seen.has_value()) {
    if (!must_have_read) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("read ", name, " before editing it"));
  }
  if (seen->size != current.size() || seen->hash != Hash(current)) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " changed since you read it; read it again"));
  }
  return absl::OkStatus();
}

}  // namespace agent::daemon::tools
