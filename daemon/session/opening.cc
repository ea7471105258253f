#include "daemon/session/opening.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/base/random_id.h"
#include "daemon/context/context_config.h"
#include "daemon/context/first_use.h"
#include "daemon/store/legacy_sessions.h"
#include "daemon/store/store.h"

namespace agent::daemon {
namespace {

void AddLine(std::string* text, const std::string& line) {
  if (line.empty()) return;
  absl::StrAppend(text, text->empty() ? "" : "\n", line);
}

// What the first turn of a new session shows: its instruction files when they are new to the
// person, what was cut of them, a prompt problem, a migration, and why commands are not
// confined (never a silent fallback).
std::string FirstNotice(const std::string& workdir, const BuiltSystemPrompt& prompt,
                        bool instructions_changed, const sandbox::Sandbox* sandbox) {
  std::string notice;
  if (instructions_changed) {
    notice = context::InstructionsNotice(prompt.instructions);
  } else {
    notice = prompt.instructions.cut_note;
  }
  AddLine(&notice, prompt.problem);
  AddLine(&notice, TakeMigrationNote(workdir));
  AddLine(&notice, sandbox::SandboxNotice(sandbox));
  return notice;
}

}  // namespace

BuiltSystemPrompt BuildSessionPrompt(const std::string& workdir, const std::string& cwd,
                                     const Clock& clock) {
  return BuildSystemPromptFor(workdir, cwd, clock.Now());
}

bool MarkInstructionsSeen(const std::string& workdir, const BuiltSystemPrompt& prompt) {
  return context::MarkInstructionsSeen(StateDir() + "/instructions_seen.json", workdir,
                                       prompt.instructions);
}

absl::StatusOr<std::shared_ptr<Session>> CreateSession(const std::string& workdir,
                                                       SessionSettings settings, std::string title,
                                                       SessionDeps deps) {
  Session::Opening o;
  o.workdir = workdir;
  SessionMeta& meta = o.meta;
  meta.id = RandomHexId(1);
  meta.workdir = workdir;
  meta.title = std::move(title);
  meta.model = settings.model.model;
  if (std::string cwd = DirectoryInside(workdir, settings.cwd); cwd != workdir) meta.cwd = cwd;
  meta.created_unix_ms = meta.updated_unix_ms = deps.clock->NowMs();
  auto lock = SessionLock::Acquire(workdir, meta.id);
  if (!lock.ok()) return lock.status();
  o.lock = *std::move(lock);
  o.answered = settings.child.has_value();  // its parent names it before the model answers
  BuiltSystemPrompt prompt;
  if (settings.child.has_value()) {
    meta.parent_id = settings.child->parent_id;
    meta.agent = settings.child->agent;
    meta.depth = settings.child->depth;
    prompt = std::move(settings.child->prompt);
    settings.child.reset();
  } else {
    prompt = BuildSessionPrompt(workdir, meta.cwd, *deps.clock);
  }
  (void)o.transcript.AppendSystem(prompt.text);
  o.prompt = std::move(prompt);
  o.notice =
      FirstNotice(workdir, o.prompt, MarkInstructionsSeen(workdir, o.prompt), deps.sandbox.get());
  o.prices = context::LoadContextConfig().prices;
  o.settings = std::move(settings);
  auto s = std::make_shared<Session>(std::move(o), std::move(deps));
  if (s->HasUnsaved()) {
    return absl::UnavailableError(absl::StrCat("cannot save the new session in ",
                                               SessionsDir(workdir), ": ",
                                               s->UnsavedError().message()));
  }
  return s;
}

absl::StatusOr<std::shared_ptr<Session>> LoadSession(const std::string& workdir,
                                                     const std::string& id,
                                                     SessionSettings settings, SessionDeps deps) {
  Session::Opening o;
  o.workdir = workdir;
  o.kind = Session::Opening::Kind::kLoaded;
  auto lock = SessionLock::Acquire(workdir, id);
  if (!lock.ok()) return lock.status();
  o.lock = *std::move(lock);
  JournalReport journal;
  auto transcript = LoadTranscript(workdir, id, &journal);
  if (!transcript.ok()) return transcript.status();
  o.transcript = *std::move(transcript);
  if (auto m = LoadMeta(workdir, id); m.ok()) {
    o.meta = *std::move(m);
  } else {
    o.meta.id = id;
    o.meta.workdir = workdir;
    o.meta.created_unix_ms = o.meta.updated_unix_ms = deps.clock->NowMs();
  }
  if (settings.model.model.empty()) settings.model.model = o.meta.model;
  o.settings = std::move(settings);
  if (o.transcript.Seal("interrupted: the daemon stopped before this call finished") > 0 ||
      journal.NeedsRewrite()) {
    o.write = Session::Opening::Write::kAll;
  } else if (o.meta.message_count != static_cast<int64_t>(o.transcript.size())) {
    o.write = Session::Opening::Write::kMetaOnly;  // the daemon stopped inside a turn
  } else {
    o.write = Session::Opening::Write::kNothing;
  }
  o.notice = TakeMigrationNote(workdir);  // legacy_sessions.h
  if (const std::string note = journal.Note(id); !note.empty()) {
    std::fprintf(stderr, "agentd: %s\n", note.c_str());
    AddLine(&o.notice, note);
  }
  o.prices = context::LoadContextConfig().prices;
  return std::make_shared<Session>(std::move(o), std::move(deps));
}

absl::StatusOr<std::shared_ptr<Session>> ForkSession(Session& source, int at_message,
                                                     SessionDeps deps) {
  Session::Opening o = source.ForkPoint(at_message);
  SessionMeta& meta = o.meta;
  meta.parent_id = meta.id;
  meta.id = RandomHexId(1);
  meta.created_unix_ms = meta.updated_unix_ms = deps.clock->NowMs();
  meta.title = "fork of " + meta.title;
  auto lock = SessionLock::Acquire(o.workdir, meta.id);
  if (!lock.ok()) return lock.status();
  o.lock = *std::move(lock);
  o.notice = TakeMigrationNote(o.workdir);
  o.prices = context::LoadContextConfig().prices;
  return std::make_shared<Session>(std::move(o), std::move(deps));
}

}  // namespace agent::daemon
