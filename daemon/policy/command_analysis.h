// What one simple command runs besides itself, as far as its text shows, so that a deny rule
// is not bypassed by spelling a command differently and a wildcard allow rule does not approve
// a command that runs another one it never named. Pure; thread-compatible.
//
// Recognised:
//   - spellings of the command name: quotes and backslashes (`\rm`, `'rm'`, `r""m`, $'\x72m'),
//     a directory (`/bin/rm`, `./rm`), leading assignments and redirections (`X=1 >out rm`);
//   - wrappers that run the command after their options, peeled off: `command` (not with -v/-V),
//     `builtin`, `env` (options, NAME=value), `exec`, `time`, `nice`, `nohup`, `timeout`
//     (options, duration), `stdbuf`, `sudo`, `doas`, `setsid`, `ionice`, `taskset`, `chroot`,
//     `unbuffer`, `busybox`, `coproc`, and `xargs` (which also runs_other). A wrapper option this
//     code does not know makes every later plain word a candidate command (deny sees more);
//   - commands that hand a string to a shell or run another command (runs_other): `eval`,
//     `sh/bash/dash/zsh/ksh/… -c`, `su -c`, `env -S`, `watch`, `trap`, `parallel`, `xargs`,
//     `find -exec/-execdir/-ok/-okdir`, `source` and `.`, `alias` (its values), `hash -p`;
//   - substitutions bash runs from quoted text it evaluates as arithmetic or as a variable name
//     with a subscript: the words of `printf`, `test`, `[`, `[[`, `let`, `declare`, `typeset`,
//     `local`, `readonly`, `export`, `unset`, `read`, `mapfile`, `readarray`, `wait`, and
//     assignment values (`printf -v 'a[$(id)]'`, `x='a[$(id)]'; echo $((x))`).
// Not recognised: programs that run commands in their own syntax (`make`, `python -c`, `awk`,
// `ssh host cmd`, `git -c core.pager=…`): allow rules for such programs are trusted with that.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::policy {

struct CommandAnalysis {
  // Other spellings of the command for deny rules: each with quotes removed, assignments and
  // redirections dropped, the command name without its directory (and once with it, when it
  // had one), for the command itself and for each command a wrapper runs. Blanks collapsed.
  std::vector<std::string> forms;
  // Command lines handed to a shell as a string (`eval 'rm x'`, `bash -c 'rm x'`): to be parsed
  // and checked against deny rules as the command itself is.
  std::vector<std::string> shell_strings;
  // Commands of substitutions hidden in quoted text bash evaluates as code
  // (`printf -v 'a[$(id)]' x` -> `id`): commands of their own, to be allowed on their own.
  std::vector<std::string> hidden_commands;
  // Runs a command or string it is handed: only an exact rule (or a person) may allow it.
  bool runs_other = false;
  // What runs cannot be told from the text (a command name from an expansion or a glob, a
  // script file, a shell reading stdin, `source`, hidden text that does not parse, or more
  // wrappers than this code follows): deny rules cannot vouch that they saw it.
  bool opaque = false;
};

// `part` is one simple command as ParseBashCommand returns it.
CommandAnalysis AnalyzeCommand(std::string_view part);

}  // namespace agent::daemon::policy
