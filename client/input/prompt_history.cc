#include "client/input/prompt_history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace agent::client {
namespace {

// Holds flock(`mode`) on "<path>.lock" for its lifetime; ok() false when it could not.
class FileLock {
 public:
  FileLock(const std::string& path, int mode) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) return;
    while (::flock(fd_, mode) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

bool ReadFile(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) != 0) {  // bounded by the file's size
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

bool WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(l);
  }
  return lines;
}

}  // namespace

std::string EncodeHistoryEntry(const std::string& entry) {
  std::string out;
  out.reserve(entry.size());
  for (char c : entry) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::string DecodeHistoryEntry(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out += line[i];
      continue;
    }
    char n = line[++i];
    out += n == 'n' ? '\n' : n == 'r' ? '\r' : n;
  }
  return out;
}

absl::Status PromptHistory::Append(const std::string& entry) const {
  FileLock lock(path_, LOCK_EX);
  if (!lock.ok()) return Errno("cannot lock", path_ + ".lock");
  // Opened under the lock: a compaction's rename cannot come between.
  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Errno("cannot open", path_);
  bool ok = WriteAll(fd, EncodeHistoryEntry(entry) + "\n");
  ::close(fd);
  if (!ok) return Errno("cannot write", path_);
  std::string text;
  ReadFile(path_, &text);
  std::vector<std::string> lines = Lines(text);
  if (lines.size() > 2 * max_entries_) return CompactLocked(lines);
  return absl::OkStatus();
}

absl::Status PromptHistory::CompactLocked(const std::vector<std::string>& lines) const {
  std::string keep;
  for (size_t i = lines.size() - max_entries_; i < lines.size(); ++i) {
    absl::StrAppend(&keep, lines[i], "\n");
  }
  std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Errno("cannot open", tmp);
  bool ok = WriteAll(fd, keep) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Errno("cannot rewrite", path_);
  }
  return absl::OkStatus();
}

std::vector<std::string> PromptHistory::Load() const {
  std::string text;
  {
    FileLock lock(path_, LOCK_SH);
    if (!ReadFile(path_, &text)) return {};
  }
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    std::string e = DecodeHistoryEntry(line);
    if (out.empty() || out.back() != e) out.push_back(std::move(e));
  }
  if (out.size() > max_entries_)
    out.erase(out.begin(), out.end() - static_cast<long>(max_entries_));
  return out;
}

}  // namespace agent::client
