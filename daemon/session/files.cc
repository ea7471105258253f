#include "daemon/session/files.h"

#include <utility>

#include "common/append_only_file.h"

namespace agent::daemon {
namespace {

class DiskFiles final : public SessionFiles {
 public:
  DiskFiles(std::string workdir, std::string id)
      : workdir_(std::move(workdir)), id_(std::move(id)) {}
  absl::Status WriteTranscript(std::string_view file_text) override {
    journal_.Close();  // a new journal replaces it
    return SaveTranscriptText(workdir_, id_, file_text);
  }
  // Kept open between appends: a step's save does not walk the state directory again.
  absl::Status AppendJournal(std::string_view lines) override {
    return journal_.Append(lines, journal_path_,
                           [&] { return OpenJournalForAppend(workdir_, id_); });
  }
  absl::Status WriteMeta(const SessionMeta& meta) override { return SaveMeta(meta); }
  absl::Status Delete() override {
    journal_.Close();
    return DeleteSessionFiles(workdir_, id_);
  }

 private:
  const std::string workdir_;
  const std::string id_;
  const std::string journal_path_ = JournalPath(workdir_, id_);
  AppendOnlyFile journal_;
};

}  // namespace

std::unique_ptr<SessionFiles> DiskSessionFiles(std::string workdir, std::string id) {
  return std::make_unique<DiskFiles>(std::move(workdir), std::move(id));
}

}  // namespace agent::daemon
