#include "common/file_stamp.h"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>

namespace agent {
namespace {

int64_t Ns(const timespec& t) { return int64_t{t.tv_sec} * 1000 * 1000 * 1000 + t.tv_nsec; }

}  // namespace

FileStamp StampOf(const struct stat& st) {
  return FileStamp{true, st.st_dev, st.st_ino, st.st_size, Ns(st.st_mtim), Ns(st.st_ctim)};
}

FileStamp StampOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return FileStamp{};
  return StampOf(st);
}

std::vector<FileStamp> StampsOf(const std::vector<std::string>& paths, int64_t fresh_ns,
                                bool* fresh) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::vector<FileStamp> out;
  out.reserve(paths.size());
  *fresh = false;
  for (const std::string& p : paths) {
    out.push_back(StampOf(p));
    const FileStamp& s = out.back();
    if (s.exists && Ns(now) - std::max(s.mtime_ns, s.ctime_ns) < fresh_ns) *fresh = true;
  }
  return out;
}

}  // namespace agent
