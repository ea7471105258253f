// Project instruction files (AGENTS.md and friends), discovered as Codex documents it: the
// user's global file, then one file per directory from the project root down to the
// session's working directory, concatenated root first under a total byte cap.
//
// The files are repository content, so they are read defensively: a file must be a regular
// file whose real path stays inside the project (a symlink to ~/.ssh/id_rsa is skipped),
// it is opened without blocking (a FIFO never hangs the daemon) and read only up to the cap.
// Pure functions over the file system; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace agent::daemon::context {

struct InstructionOptions {
  std::string global_file;   // $XDG_CONFIG_HOME/agent/AGENTS.md; empty: none
  std::string project_root;  // absolute, canonical
  std::string cwd;           // absolute; outside project_root (or empty) means project_root
  // Tried after AGENTS.override.md and AGENTS.md, in order (config "instruction_fallbacks").
  std::vector<std::string> fallback_names = {"CLAUDE.md"};
  int64_t max_bytes = 32 * 1024;  // total over every file (config "instruction_max_bytes")
};

struct Instruction {
  std::string path;        // as shown: relative to the project root, absolute for the global file
  int64_t bytes = 0;       // the file's size
  bool truncated = false;  // cut (or left out) by the total cap
  std::string text;        // what goes into the prompt (empty when left out)
};

struct Instructions {
  std::vector<Instruction> files;  // in prompt order; empty files are not listed
  // Set when the cap cut something: one line saying what was left out.
  std::string cut_note;
  int64_t total_bytes() const;  // of `text` over files
};

Instructions DiscoverInstructions(const InstructionOptions& options);

// The directories from `root` down to `cwd`, root first ({root} when cwd is not inside it).
std::vector<std::string> DirectoryChain(const std::string& root, const std::string& cwd);

// The section of the system prompt that carries the files; empty when there are none.
std::string RenderInstructions(const Instructions& instructions);

}  // namespace agent::daemon::context
