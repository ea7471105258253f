// A file appended to again and again (a loaded session's journal), kept open between appends
// instead of being reached through its directories each time.
#pragma once

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace agent {

// Opened again when the file was replaced (renamed over) or removed since the last append;
// a file renamed away under another name keeps receiving the appends, as with any open file.
// One writer at a time.
class AppendOnlyFile {
 public:
  AppendOnlyFile() = default;
  ~AppendOnlyFile() { Close(); }
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // Appends `content` and fsyncs; `open` gives a descriptor opened O_WRONLY | O_APPEND when
  // none is open. `path` names the file in errors.
  absl::Status Append(std::string_view content, const std::string& path,
                      absl::FunctionRef<absl::StatusOr<int>()> open);
  // Before the file is replaced or removed by its owner.
  void Close();

 private:
  int fd_ = -1;
};

}  // namespace agent
