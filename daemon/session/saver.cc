#include "daemon/session/saver.h"

#include <cstdio>
#include <string>
#include <utility>

namespace agent::daemon {

SessionSaver::SessionSaver(std::unique_ptr<SessionFiles> files,
                           std::function<void(const Outcome&)> on_change)
    : files_(std::move(files)), on_change_(std::move(on_change)) {}

void SessionSaver::Queue(const Transcript& t, bool whole) {
  {
    agent::MutexLock l(&q_mu_);
    if (dropped_) return;
    const bool append_only =
        started_ && !need_whole_ && t.rewrites() == rewrites_ && t.size() >= covered_;
    if (whole || !append_only) {
      queued_.whole = t.FileText();
      queued_.lines.clear();  // the whole text holds them
      started_ = true;
      need_whole_ = false;
    } else {
      for (size_t i = covered_; i < t.size(); ++i) {
        queued_.lines += t.serialized()[i];
        queued_.lines += '\n';
      }
    }
    covered_ = t.size();
    rewrites_ = t.rewrites();
    queued_.upto = covered_;
    queued_.rewrites = rewrites_;
  }
}

void SessionSaver::QueueMeta(SessionMeta meta) {
  {
    agent::MutexLock l(&q_mu_);
    if (dropped_) return;
    queued_.meta = std::move(meta);
  }
}

void SessionSaver::Drop(bool delete_files) {
  {
    agent::MutexLock l(&q_mu_);
    dropped_ = true;
    queued_ = Work{};
    queued_.delete_files = delete_files;
  }
}

bool SessionSaver::unsaved() const {
  agent::MutexLock l(&q_mu_);
  return !dropped_ && (lost_ || queued_.whole || !queued_.lines.empty());
}

absl::Status SessionSaver::last_error() const {
  agent::MutexLock l(&q_mu_);
  if (dropped_) return absl::OkStatus();
  if (lost_) return lost_error_;
  if (queued_.whole || !queued_.lines.empty()) {
    return absl::UnavailableError("its newest messages are not written yet");
  }
  return absl::OkStatus();
}

absl::Status SessionSaver::Flush() {
  absl::Status status;
  Outcome outcome;
  bool report = false;
  {
    agent::MutexLock io(&io_mu_);
    Work work;
    {
      agent::MutexLock l(&q_mu_);
      if (queued_.empty()) return absl::OkStatus();
      work = std::move(queued_);
      queued_ = Work{};
    }
    if (work.delete_files) {
      // No save follows a drop, so there is nothing to report to the session: the log says it.
      absl::Status deleted = files_->Delete();
      if (!deleted.ok()) {
        std::fprintf(stderr, "agentd: cannot remove an unanswered session's files: %s\n",
                     std::string(deleted.message()).c_str());
      }
      return deleted;
    }
    absl::Status transcript;
    if (work.whole) transcript = files_->WriteTranscript(*work.whole);
    if (transcript.ok() && !work.lines.empty()) transcript = files_->AppendJournal(work.lines);
    status = transcript;
    // The meta file is rebuilt from the transcript when lost: its failure loses no message.
    if (work.meta) {
      absl::Status m = files_->WriteMeta(*work.meta);
      if (status.ok()) status = m;
    }
    agent::MutexLock l(&q_mu_);
    const bool wrote_messages = work.whole || !work.lines.empty();
    if (wrote_messages && transcript.ok()) {
      on_disk_ = work.upto;
      on_disk_rewrites_ = work.rewrites;
      lost_ = false;
      lost_error_ = absl::OkStatus();
    } else if (wrote_messages) {
      // A failed append may have left a torn line, a failed whole write either file: only a
      // whole write is sure to put the messages on disk again. Until then, what the journal
      // took before the failure is still there, and may be all of them.
      need_whole_ = true;
      if (on_disk_rewrites_ != work.rewrites || on_disk_ < work.upto) {
        lost_ = true;
        lost_error_ = transcript;
      }
    }
    outcome.messages_on_disk = !lost_;
    if (!status.ok() && work.meta && !queued_.meta) queued_.meta = std::move(work.meta);
    report = !status.ok() || !last_.ok();
    last_ = status;
  }
  outcome.status = status;
  if (report && on_change_) on_change_(outcome);
  return status;
}

}  // namespace agent::daemon
