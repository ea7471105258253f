// Reading a settings file only when it changed. A step of a turn asks for the user's and the
// project's settings several times (hooks before and after each call, the MCP servers, the
// subagent definitions); people change them a few times a day. What stat(2) says of a file is
// compared with what it said when the file was last read.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "common/mutex.h"

namespace agent {

// One version of a file as stat(2) sees it. Equal stamps mean the same bytes, except for a
// rewrite of the same size within one tick of the file system's clock: ReadOnChange reads
// again while a file is that young.
struct FileStamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// Follows symbolic links (a changed link changes what it names); a path that cannot be stat'ed
// has the stamp of a missing file.
FileStamp StampOf(const std::string& path);
// The stamp of what stat(2) returned.
FileStamp StampOf(const struct stat& st);

// Younger than this, a file may still be rewritten within the tick its stamp shows (the
// kernel's file times advance by its clock tick, a few milliseconds; a network file system's
// by up to a second or two).
inline constexpr int64_t kFreshFileNs = int64_t{2} * 1000 * 1000 * 1000;

// Stamps of `paths`; `fresh` is set when one of them changed less than `fresh_ns` ago (or in
// the future: a clock set back).
std::vector<FileStamp> StampsOf(const std::vector<std::string>& paths, int64_t fresh_ns,
                                bool* fresh);

// A value made from files, made again only when one of them changed. Thread-safe.
template <typename T>
class ReadOnChange {
 public:
  // `fresh_ns`: 0 in tests, whose files are all young.
  explicit ReadOnChange(int64_t fresh_ns = kFreshFileNs) : fresh_ns_(fresh_ns) {}

  // `read` makes the value from `paths`, and may name more files it read (the entries of a
  // directory in `paths`: a directory's own stamp changes when an entry is added, removed or
  // renamed, not when one is rewritten in place).
  using Read = absl::FunctionRef<T(std::vector<std::string>* also_read)>;

  T Get(const std::vector<std::string>& paths, Read read) {
    MutexLock l(&mu_);  // held through the read: the callers of one value wait for one read
    std::vector<std::string> watched = paths;
    watched.insert(watched.end(), also_read_.begin(), also_read_.end());
    // Stamped before the read: a change during it shows at the next Get.
    bool fresh = false;
    std::vector<FileStamp> stamps = StampsOf(watched, fresh_ns_, &fresh);
    if (!value_.has_value() || paths != paths_ || stamps != stamps_) {
      std::vector<std::string> also;
      value_ = read(&also);
      bool also_fresh = false;
      // Stamped after the read: one written meanwhile is younger than a tick, so not kept.
      std::vector<FileStamp> also_stamps = StampsOf(also, fresh_ns_, &also_fresh);
      fresh = fresh || also_fresh;
      stamps.resize(paths.size());
      stamps.insert(stamps.end(), also_stamps.begin(), also_stamps.end());
      stamps_ = std::move(stamps);
      paths_ = paths;
      also_read_ = std::move(also);
      reads_++;
    }
    T out = *value_;
    if (fresh) value_.reset();  // too young to be told from a write to come: read next time
    return out;
  }
  T Get(const std::vector<std::string>& paths, absl::FunctionRef<T()> read) {
    return Get(paths, [&](std::vector<std::string>*) { return read(); });
  }
  // How many times a value was made (for tests).
  int reads() const {
    MutexLock l(&mu_);
    return reads_;
  }

 private:
  const int64_t fresh_ns_;
  mutable Mutex mu_;
  std::optional<T> value_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> paths_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> also_read_ ABSL_GUARDED_BY(mu_);
  std::vector<FileStamp> stamps_ ABSL_GUARDED_BY(mu_);  // of paths_, then of also_read_
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
};

// ReadOnChange for many keys (one per project), at most `kMaxKeys` remembered.
template <typename T>
class ReadOnChangeByKey {
 public:
  explicit ReadOnChangeByKey(int64_t fresh_ns = kFreshFileNs) : fresh_ns_(fresh_ns) {}

  template <typename ReadFn>
  T Get(const std::string& key, const std::vector<std::string>& paths, ReadFn&& read) {
    std::shared_ptr<ReadOnChange<T>> one;
    {
      MutexLock l(&mu_);
      if (by_key_.size() >= kMaxKeys && by_key_.count(key) == 0) by_key_.clear();
      std::shared_ptr<ReadOnChange<T>>& slot = by_key_[key];
      if (slot == nullptr) slot = std::make_shared<ReadOnChange<T>>(fresh_ns_);
      one = slot;  // a clear() by another thread leaves this one whole
    }
    return one->Get(paths, read);
  }

 private:
  static constexpr size_t kMaxKeys = 64;
  const int64_t fresh_ns_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<ReadOnChange<T>>> by_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent
