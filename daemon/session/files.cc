#include "daemon/session/files.h"

#include <utility>

namespace agent::daemon {
namespace {

class DiskFiles final : public SessionFiles {
 public:
  DiskFiles(std::string workdir, std::string id)
      : workdir_(std::move(workdir)), id_(std::move(id)) {}
  absl::Status WriteTranscript(std::string_view file_text) override {
    return SaveTranscriptText(workdir_, id_, file_text);
  }
  absl::Status AppendJournal(std::string_view lines) override {
    return daemon::AppendJournal(workdir_, id_, lines);
  }
  absl::Status WriteMeta(const SessionMeta& meta) override { return SaveMeta(meta); }
  absl::Status Delete() override { return DeleteSessionFiles(workdir_, id_); }

 private:
  const std::string workdir_;
  const std::string id_;
};

}  // namespace

std::unique_ptr<SessionFiles> DiskSessionFiles(std::string workdir, std::string id) {
  return std::make_unique<DiskFiles>(std::move(workdir), std::move(id));
}

}  // namespace agent::daemon
