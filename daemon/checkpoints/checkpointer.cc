#include "daemon/checkpoints/checkpointer.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "daemon/checkpoints/restore.h"

namespace agent::daemon::checkpoints {
namespace {

namespace v1 = agent::v1;

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

// What a diff ends with when files were left out for their size.
std::string LeftOutNote(const std::vector<std::string>& left_out, int64_t max_file_mb) {
  if (left_out.empty()) return "";
  std::string out = absl::StrCat("# not checkpointed (over ", max_file_mb,
                                 " MB; undo leaves them as they are):\n");
  for (const std::string& p : left_out) absl::StrAppend(&out, "#   ", ToValidUtf8(p), "\n");
  return out;
}

std::string FirstLine(std::string_view text) {
  std::string line(text.substr(0, std::min(text.find('\n'), size_t{200})));
  return ToValidUtf8(line);
}

// The entry that puts `c.path` back as it was on the old side of `c`.
RestoreEntry BackTo(const TreeChange& c, bool changed_since) {
  RestoreEntry e;
  e.path = c.path;
  e.mode = c.old_mode;
  e.mode_only = c.Kind() == "mode" && !changed_since;
  return e;
}

}  // namespace

Checkpointer::Checkpointer(std::string workdir, std::string session_id, CheckpointConfig config,
                           std::string stores_root)
    : workdir_(std::move(workdir)),
      session_id_(std::move(session_id)),
      config_(config),
      stores_root_(std::move(stores_root)) {
  auto loaded = LoadCheckpoints(workdir_, session_id_);
  agent::MutexLock l(&mu_);
  if (loaded.ok()) records_ = *std::move(loaded);
  if (stores_root_.empty()) {
    off_ = absl::FailedPreconditionError("file checkpoints are not kept for this session");
    off_told_ = true;  // a test's session, not a person's choice
  } else if (!config_.enabled) {
    off_ = absl::FailedPreconditionError(
        "checkpoints are off (config.json \"checkpoints\": false): undo is not available");
  }
}

Checkpointer::~Checkpointer() {
  std::optional<PendingTurn> pending;
  std::vector<std::shared_future<absl::StatusOr<std::string>>> draining;
  {
    agent::MutexLock l(&mu_);
    pending.swap(pending_);
    draining.swap(draining_);
  }
  if (pending.has_value() && pending->before.valid()) pending->before.wait();
  for (auto& f : draining) f.wait();
}

absl::StatusOr<std::shared_ptr<const ShadowStore>> Checkpointer::Store() {
  {
    agent::MutexLock l(&mu_);
    if (off_.has_value()) return *off_;
    if (store_) return store_;
  }
  auto opened = ShadowStore::Open(workdir_, stores_root_);
  absl::Status why = opened.status();
  std::shared_ptr<const ShadowStore> store;
  if (opened.ok()) {
    // The limits are checked by every snapshot (shadow_store.h), not once here: a project
    // that grows past them mid-session costs a turn no more than the limits allow.
    opened->set_limits(
        SnapshotLimits{static_cast<uint64_t>(config_.max_file_mb) << 20,
                       static_cast<uint64_t>(config_.max_project_mb) << 20,
                       static_cast<size_t>(std::max<int64_t>(config_.max_files, 0))});
    store = std::make_shared<const ShadowStore>(*std::move(opened));
  }
  agent::MutexLock l(&mu_);
  if (!why.ok()) {
    if (!absl::IsFailedPrecondition(why)) {
      why = absl::UnavailableError(absl::StrCat("checkpoints unavailable: ", why.message()));
    }
    off_ = why;
    return why;
  }
  store_ = std::move(store);
  return store_;
}

absl::StatusOr<std::string> Checkpointer::TakeBefore() {
  ASSIGN_OR_RETURN(std::shared_ptr<const ShadowStore> store, Store());
  ASSIGN_OR_RETURN(std::string tree, store->Snapshot());
  RETURN_IF_ERROR(store->Pin(session_id_, tree));
  return tree;
}

void Checkpointer::BeginTurn(int turn, int at_message, std::string_view prompt, int64_t now_ms) {
  PendingTurn p;
  p.record.turn = turn;
  p.record.at_message = at_message;
  p.record.unix_ms = now_ms;
  p.record.prompt = FirstLine(prompt);
  p.before = std::async(std::launch::async, [this] { return TakeBefore(); }).share();
  agent::MutexLock l(&mu_);
  pending_ = std::move(p);
  tool_ran_ = false;
  std::erase_if(draining_, [](const auto& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
}

void Checkpointer::BeforeTool() {
  std::shared_future<absl::StatusOr<std::string>> before;
  {
    agent::MutexLock l(&mu_);
    tool_ran_ = true;
    if (!pending_.has_value()) return;
    before = pending_->before;
  }
  before.wait();
}

std::vector<std::string> Checkpointer::EndTurn(int64_t now_ms) {
  std::optional<PendingTurn> pending;
  bool tool_ran;
  {
    agent::MutexLock l(&mu_);
    pending.swap(pending_);
    tool_ran = tool_ran_;
  }
  if (!pending.has_value()) return {};
  if (!tool_ran) {
    // Nothing of ours changed: the turn ends now, its snapshot finishes meanwhile.
    agent::MutexLock l(&mu_);
    draining_.push_back(std::move(pending->before));
    return {};
  }
  absl::StatusOr<std::string> before = pending->before.get();
  std::vector<std::string> notices;
  auto store = Store();
  if (!before.ok() || !store.ok()) {
    absl::Status why = store.ok() ? before.status() : store.status();
    agent::MutexLock l(&mu_);
    if (!off_told_) notices.push_back(std::string(why.message()));
    off_told_ = true;
    return notices;
  }
  std::vector<std::string> left_out;
  absl::StatusOr<std::string> after = (*store)->Snapshot(&left_out);
  if (!after.ok()) {
    const bool limit = absl::IsFailedPrecondition(after.status());
    notices.push_back(limit ? std::string(after.status().message())
                            : absl::StrCat("checkpoint failed: ", after.status().message()));
    return notices;
  }
  if (*after == *before) return notices;
  pending->record.before = *before;
  pending->record.after = *after;
  if (left_out.size() > kMaxLeftOut) left_out.resize(kMaxLeftOut);
  pending->record.left_out = std::move(left_out);
  Record(**store, std::move(pending->record), now_ms);
  return notices;
}

void Checkpointer::Record(const ShadowStore& store, CheckpointRecord record, int64_t now_ms) {
  auto changes = store.Changes(record.before, record.after);
  record.files_changed = changes.ok() ? static_cast<int>(changes->size()) : 0;
  (void)store.Keep(absl::StrCat(session_id_, "-", record.turn), record.unix_ms, record.before,
                   record.after);
  std::vector<CheckpointRecord> copy;
  {
    agent::MutexLock l(&mu_);
    records_.push_back(std::move(record));
    copy = records_;
  }
  (void)SaveCheckpoints(workdir_, session_id_, copy);
  const int64_t max_age = static_cast<int64_t>(config_.max_age_days) * kDayMs;
  (void)store.Prune(now_ms, max_age, config_.max_count);
  LimitStoreSize(store, now_ms, max_age);
}

// The store's real disk use (loose objects included) within max_store_mb: packed first, then
// the oldest checkpoints of the project are forgotten, half of them at a time (so at most
// log2(max_count) rounds), the newest always kept.
void Checkpointer::LimitStoreSize(const ShadowStore& store, int64_t now_ms, int64_t max_age_ms) {
  const uint64_t cap = static_cast<uint64_t>(std::max<int64_t>(config_.max_store_mb, 0)) << 20;
  if (cap == 0 || DirectoryBytes(store.dir()) <= cap) return;
  (void)store.Pack();
  for (int keep = config_.max_count; keep > 1 && DirectoryBytes(store.dir()) > cap;) {
    keep /= 2;
    (void)store.Prune(now_ms, max_age_ms, std::max(keep, 1));
    (void)store.Pack();
  }
}

void Checkpointer::Compacted(int first, int removed) {
  if (removed <= 0) return;
  auto moved = [first, removed](int at) {
    if (at >= first + removed) return at - (removed - 1);
    return std::min(at, first);
  };
  std::vector<CheckpointRecord> copy;
  {
    agent::MutexLock l(&mu_);
    if (pending_.has_value()) pending_->record.at_message = moved(pending_->record.at_message);
    for (CheckpointRecord& r : records_) r.at_message = moved(r.at_message);
    copy = records_;
  }
  if (!copy.empty()) (void)SaveCheckpoints(workdir_, session_id_, copy);
}

std::vector<CheckpointRecord> Checkpointer::List() const {
  agent::MutexLock l(&mu_);
  std::vector<CheckpointRecord> out;
  for (const CheckpointRecord& r : records_) {
    if (!r.undone) out.push_back(r);
  }
  return out;
}

absl::StatusOr<UndoResult> Checkpointer::Undo(int turns, bool dry_run, bool overwrite) {
  std::vector<size_t> active;
  {
    agent::MutexLock l(&mu_);
    for (size_t i = 0; i < records_.size(); ++i) {
      if (!records_[i].undone) active.push_back(i);
    }
  }
  const size_t n = static_cast<size_t>(std::max(turns, 1));
  if (active.size() > n) active.erase(active.begin(), active.end() - static_cast<long>(n));
  return RestoreRange(std::move(active), dry_run, overwrite);
}

absl::StatusOr<UndoResult> Checkpointer::RestoreFrom(int at_message, bool dry_run, bool overwrite) {
  // Checkpoints off (or failing) is an error, not "nothing changed": a rewind asked to restore.
  RETURN_IF_ERROR(Store().status());
  std::vector<size_t> active;
  {
    agent::MutexLock l(&mu_);
    for (size_t i = 0; i < records_.size(); ++i) {
      if (!records_[i].undone && records_[i].at_message >= at_message) active.push_back(i);
    }
  }
  if (active.empty()) {
    UndoResult r;
    r.message = "no turn after that point changed files";
    return r;
  }
  return RestoreRange(std::move(active), dry_run, overwrite);
}

namespace {

// What a restore from `after` back to `before` writes, with the files now in `now`.
struct RestorePlan {
  UndoResult result;
  std::vector<RestoreEntry> removals, writes;
  std::vector<std::string> blob_ids;  // of the writes that need content, in order
  int skipped = 0;
  int failed = 0;  // set by ApplyRestore
};

absl::StatusOr<RestorePlan> PlanRestore(const ShadowStore& store, const std::string& before,
                                        const std::string& after, const std::string& now,
                                        bool overwrite) {
  ASSIGN_OR_RETURN(std::vector<TreeChange> done, store.Changes(before, after));
  ASSIGN_OR_RETURN(std::vector<TreeChange> since, store.Changes(after, now));
  ASSIGN_OR_RETURN(std::vector<TreeChange> undone, store.Changes(before, now));
  // Changed since the turns: differs from how they left it and from how it was before them
  // (a file already back as it was is not in the way of anything).
  std::set<std::string> differs_from_before, touched;
  for (const TreeChange& c : undone) differs_from_before.insert(c.path);
  for (const TreeChange& c : since) {
    if (differs_from_before.count(c.path) > 0) touched.insert(c.path);
  }
  RestorePlan plan;
  for (const TreeChange& c : done) {
    v1::FileChange f;
    f.set_path(c.path);
    f.set_change(c.Kind());
    f.set_changed_since(touched.count(c.path) > 0);
    plan.result.files.push_back(f);
    if (c.old_mode == "160000" || c.new_mode == "160000") continue;  // nested repositories
    if (differs_from_before.count(c.path) == 0) continue;            // already as it was
    if (f.changed_since() && !overwrite) {
      ++plan.skipped;
      continue;
    }
    RestoreEntry e = BackTo(c, f.changed_since());
    if (e.mode == "000000") {
      plan.removals.push_back(std::move(e));
    } else {
      if (!e.mode_only) plan.blob_ids.push_back(c.old_blob);
      plan.writes.push_back(std::move(e));
    }
  }
  return plan;
}

// Applies the plan; the message says what was done.
absl::Status ApplyRestore(const ShadowStore& store, RestorePlan& plan) {
  ASSIGN_OR_RETURN(std::vector<std::string> blobs, store.Blobs(plan.blob_ids));
  size_t b = 0;
  for (RestoreEntry& e : plan.writes) {
    if (!e.mode_only) e.content = std::move(blobs[b++]);
  }
  // Deepest first, so a directory a turn made is empty when its turn comes.
  std::sort(plan.removals.begin(), plan.removals.end(),
            [](const RestoreEntry& x, const RestoreEntry& y) { return x.path > y.path; });
  std::vector<std::string> failed;
  int restored = 0;
  for (const std::vector<RestoreEntry>* list : {&plan.removals, &plan.writes}) {
    for (const RestoreEntry& e : *list) {
      absl::Status s = RestoreOne(store.project_root(), e);
      if (s.ok()) {
        ++restored;
      } else {
        failed.push_back(std::string(s.message()));
      }
    }
  }
  plan.failed = static_cast<int>(failed.size());
  UndoResult& r = plan.result;
  r.restored = restored > 0 || failed.empty();
  r.message = absl::StrCat("restored ", restored, " file", restored == 1 ? "" : "s");
  if (plan.skipped > 0) {
    absl::StrAppend(&r.message, "; kept ", plan.skipped,
                    " changed since the turn (overwrite to restore them too)");
  }
  if (!failed.empty()) absl::StrAppend(&r.message, "; failed: ", absl::StrJoin(failed, "; "));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UndoResult> Checkpointer::RestoreRange(std::vector<size_t> indexes, bool dry_run,
                                                      bool overwrite) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ShadowStore> store, Store());
  if (indexes.empty()) {
    return absl::FailedPreconditionError("nothing to undo: no turn of this session changed files");
  }
  CheckpointRecord first, last;
  {
    agent::MutexLock l(&mu_);
    first = records_[indexes.front()];
    last = records_[indexes.back()];
  }
  if (!store->HasObject(first.before) || !store->HasObject(last.after)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the checkpoint of turn ", first.turn, " was pruned"));
  }
  ASSIGN_OR_RETURN(std::string now, store->Snapshot());
  ASSIGN_OR_RETURN(RestorePlan plan, PlanRestore(*store, first.before, last.after, now, overwrite));
  plan.result.first_turn = first.turn;
  plan.result.last_turn = last.turn;
  if (dry_run) {
    if (plan.skipped > 0) plan.result.message = absl::StrCat(plan.skipped, " changed since");
    return std::move(plan.result);
  }
  RETURN_IF_ERROR(ApplyRestore(*store, plan));
  std::set<std::string> left_out;
  {
    agent::MutexLock l(&mu_);
    for (size_t i : indexes)
      left_out.insert(records_[i].left_out.begin(), records_[i].left_out.end());
  }
  if (!left_out.empty()) {
    absl::StrAppend(&plan.result.message, "; left as they are (over ", config_.max_file_mb,
                    " MB, not checkpointed): ", absl::StrJoin(left_out, ", "));
  }
  std::vector<CheckpointRecord> copy;
  {
    // With files kept or not written, the turns stay in effect: another undo (with overwrite,
    // or once the cause of a failure is gone) can finish the job.
    agent::MutexLock l(&mu_);
    for (size_t i : indexes) records_[i].undone = plan.skipped == 0 && plan.failed == 0;
    copy = records_;
  }
  (void)SaveCheckpoints(workdir_, session_id_, copy);
  return std::move(plan.result);
}

absl::StatusOr<std::string> Checkpointer::Diff(int turn) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ShadowStore> store, Store());
  CheckpointRecord found;
  bool any = false;
  {
    agent::MutexLock l(&mu_);
    for (const CheckpointRecord& r : records_) {
      if (turn == 0 || r.turn == turn) {
        found = r;
        any = true;
        break;
      }
    }
  }
  if (!any) return std::string();
  if (turn != 0) {
    ASSIGN_OR_RETURN(std::string diff, store->Diff(found.before, found.after));
    return diff + LeftOutNote(found.left_out, config_.max_file_mb);
  }
  std::vector<std::string> left_out;
  ASSIGN_OR_RETURN(std::string now, store->Snapshot(&left_out));
  ASSIGN_OR_RETURN(std::string diff, store->Diff(found.before, now));
  return diff + LeftOutNote(left_out, config_.max_file_mb);
}

}  // namespace agent::daemon::checkpoints
