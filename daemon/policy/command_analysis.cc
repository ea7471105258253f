#include "daemon/policy/command_analysis.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "daemon/policy/bash_split.h"
#include "daemon/policy/command_words.h"

namespace agent::daemon::policy {
namespace {

// Commands analysed per part (wrapper levels and candidate commands): beyond it, opaque.
constexpr int kBudget = 32;
// Hidden commands collected per part: beyond it, opaque.
constexpr size_t kMaxHidden = 64;

using Words = std::vector<ShellWord>;

// How a wrapper's arguments read: options, then `operands` words, then the command it runs.
struct WrapperSpec {
  std::string_view name;
  std::string_view arg_options;       // short options taking an argument (the next word or the
                                      // rest of the cluster)
  std::string_view flag_options;      // short options taking none
  std::string_view no_run_options;    // short options after which nothing runs
  std::string_view long_arg_options;  // ` --opt ` list: take the next word unless `--opt=x`
  std::string_view long_flag_options;
  int operands = 0;
  bool assignments = false;  // NAME=value words may precede the command (env)
  bool runs_other = false;   // feeds the command input it did not name (xargs)
};

constexpr WrapperSpec kWrappers[] = {
    {"command", "", "p", "vV", "", ""},
    {"builtin", "", "", "", "", ""},
    {"exec", "a", "cl", "", "", ""},
    {"env", "uCS", "i0v", "", " --unset --chdir --split-string ",
     " --ignore-environment --null --debug --block-signal --default-signal --ignore-signal "
     "--list-signal-handling ",
     0, true},
    {"nice", "n", "0123456789", "", " --adjustment ", ""},
    {"nohup", "", "", "", "", ""},
    {"timeout", "ks", "v", "", " --kill-after --signal ",
     " --preserve-status --foreground --verbose ", 1},
    {"stdbuf", "ioe", "", "", " --input --output --error ", ""},
    {"sudo", "CDghpRrTtUu", "AbBEHiknNPSs", "elvKV",
     " --user --group --prompt --close-from --chdir --role --type --command-timeout --other-user "
     "--host --chroot ",
     " --askpass --background --bell --preserve-env --set-home --login --remove-timestamp "
     "--reset-timestamp --non-interactive --preserve-groups --stdin --shell "},
    {"doas", "u", "ns", "CL", "", ""},
    {"time", "fo", "apqv", "", " --format --output ", " --portability --append --verbose --quiet "},
    {"setsid", "", "cfw", "", "", " --ctty --fork --wait "},
    {"ionice", "cn", "t", "pPu", " --class --classdata ", " --ignore "},
    {"taskset", "", "ac", "p", "", " --all-tasks --cpu-list ", 1},
    {"chroot", "", "", "", " --userspec --groups ", " --skip-chdir ", 1},
    {"unbuffer", "", "p", "", "", ""},
    {"busybox", "", "", "", "", ""},
    {"coproc", "", "", "", "", ""},
    {"xargs", "adEILnPs", "0oprtxeil", "",
     " --arg-file --delimiter --max-args --max-procs --max-chars --max-lines --process-slot-var ",
     " --null --no-run-if-empty --verbose --interactive --exit --open-tty --replace --eof ", 0,
     false, true},
};

// Builtins that evaluate (some of) their words as arithmetic or as a variable name that may
// carry a subscript, running the substitutions inside even when they were quoted.
constexpr std::string_view kEvaluatingBuiltins[] = {
    "printf",   "test",   "[",     "[[",   "let",     "declare",   "typeset", "local",
    "readonly", "export", "unset", "read", "mapfile", "readarray", "wait"};

constexpr std::string_view kShells[] = {"sh",  "bash", "dash", "zsh",  "ksh", "mksh",
                                        "ash", "yash", "posh", "fish", "csh", "tcsh"};

template <typename List>
bool Contains(const List& list, std::string_view item) {
  return std::find(std::begin(list), std::end(list), item) != std::end(list);
}

// Whether `name` (`--opt`) is in a ` --a --b ` list.
bool Listed(std::string_view list, std::string_view name) {
  return list.find(" " + std::string(name) + " ") != std::string_view::npos;
}

const WrapperSpec* FindWrapper(std::string_view name) {
  for (const WrapperSpec& spec : kWrappers) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `NAME=…`, `NAME+=…`, `NAME[…]=…`: the position of the `=`, or npos.
size_t AssignmentEquals(const ShellWord& word) {
  const std::string& v = word.value;
  if (v.empty() || !IsNameStart(v[0])) return std::string::npos;
  size_t i = 1;
  while (i < v.size() && IsNameChar(v[i])) ++i;
  if (i < v.size() && v[i] == '[') {
    const size_t close = v.find(']', i);
    if (close == std::string::npos) return std::string::npos;
    i = close + 1;
  }
  if (i < v.size() && v[i] == '+') ++i;
  return (i < v.size() && v[i] == '=') ? i : std::string::npos;
}

bool IsOptionLike(const ShellWord& word) { return word.value.size() > 1 && word.value[0] == '-'; }

std::string Join(const Words& words, size_t begin, size_t end) {
  std::string out;
  for (size_t k = begin; k < end; ++k) {
    if (k > begin) out.push_back(' ');
    out.append(words[k].value);
  }
  return out;
}

// Runs of blanks and newlines become one space, as in a normalised part.
std::string CollapseBlanks(std::string_view text) {
  std::string out;
  bool blank = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      blank = !out.empty();
      continue;
    }
    if (blank) out.push_back(' ');
    blank = false;
    out.push_back(c);
  }
  return out;
}

// What a wrapper's arguments say about the command it runs.
struct Peeled {
  size_t command = std::string::npos;       // the word that names it; npos when none runs
  bool unknown = false;                     // an option not in the spec
  std::optional<std::string> split_string;  // env -S: a command line of its own
};

class Analyzer {
 public:
  explicit Analyzer(CommandAnalysis* out) : out_(out) {}

  // The command starting at (or after the assignments at) words[begin], up to `end`.
  void Command(const Words& words, size_t begin, size_t end) {
    if (--budget_ < 0) {
      out_->opaque = true;
      return;
    }
    size_t i = begin;
    for (; i < end && AssignmentEquals(words[i]) != std::string::npos; ++i) {
      ScanHidden(words[i].value);
    }
    if (i >= end) return;
    const ShellWord& first = words[i];
    if (first.expands || first.globs || first.unsure || first.value.empty()) {
      out_->opaque = true;  // the name is only known when the command runs
      return;
    }
    const size_t slash = first.value.rfind('/');
    const std::string name = first.value.substr(slash == std::string::npos ? 0 : slash + 1);
    const std::string args = i + 1 < end ? " " + Join(words, i + 1, end) : "";
    out_->forms.push_back(CollapseBlanks(name + args));
    if (slash != std::string::npos) out_->forms.push_back(CollapseBlanks(first.value + args));
    if (Contains(kEvaluatingBuiltins, name)) {
      for (size_t k = i + 1; k < end; ++k) ScanHidden(words[k].value);
    }
    Dispatch(name, words, i, end);
  }

 private:
  void Dispatch(std::string_view name, const Words& words, size_t i, size_t end) {
    if (const WrapperSpec* spec = FindWrapper(name)) return Wrapper(*spec, words, i, end);
    if (Contains(kShells, name)) return Shell(words, i, end);
    if (name == "eval") {
      out_->runs_other = true;
      const size_t from = (i + 1 < end && words[i + 1].value == "--") ? i + 2 : i + 1;
      return ShellString(Join(words, from, end));
    }
    if (name == "source" || name == ".") {
      out_->runs_other = true;
      out_->opaque = true;
      return;
    }
    if (name == "alias") {  // `alias x='rm -rf'; x /`: each value is a command line
      out_->runs_other = true;
      for (size_t k = i + 1; k < end; ++k) {
        const size_t eq = words[k].value.find('=');
        if (eq != std::string::npos) ShellString(words[k].value.substr(eq + 1));
      }
      return;
    }
    if (name == "hash") {  // `hash -p /bin/rm x` makes `x` run rm
      for (size_t k = i + 1; k < end; ++k) {
        if (words[k].value.rfind("-p", 0) == 0 || words[k].value.rfind("--", 0) == 0) {
          out_->runs_other = out_->opaque = true;
        }
      }
      return;
    }
    if (name == "find") return Find(words, i, end);
    if (name == "su") return Su(words, i, end);
    if (name == "trap" || name == "watch" || name == "parallel") {
      return StringRunner(name, words, i, end);
    }
  }

  void ShellString(std::string text) { out_->shell_strings.push_back(std::move(text)); }

  // Quoted text bash evaluates as code: the substitutions in it are commands of their own.
  void ScanHidden(std::string_view text) {
    if (text.find("$(") == std::string_view::npos && text.find('`') == std::string_view::npos) {
      return;
    }
    std::optional<std::vector<std::string>> commands = SubstitutionsIn(text);
    if (!commands.has_value()) {
      out_->opaque = true;
      return;
    }
    for (std::string& c : *commands) {
      if (out_->hidden_commands.size() >= kMaxHidden) {
        out_->opaque = true;
        return;
      }
      out_->hidden_commands.push_back(std::move(c));
    }
  }

  void Wrapper(const WrapperSpec& spec, const Words& words, size_t i, size_t end) {
    if (spec.runs_other) out_->runs_other = true;
    const Peeled peeled = Peel(spec, words, i + 1, end);
    if (peeled.split_string.has_value()) {
      out_->runs_other = true;
      ShellString(*peeled.split_string);
    }
    if (!peeled.unknown) {
      if (peeled.command != std::string::npos) Command(words, peeled.command, end);
      return;
    }
    // An option this code does not know may or may not take an argument: every later plain
    // word may be the command.
    for (size_t k = i + 1; k < end; ++k) {  // past the budget, Command marks opaque
      if (!IsOptionLike(words[k]) && AssignmentEquals(words[k]) == std::string::npos) {
        Command(words, k, end);
      }
    }
  }

  static Peeled Peel(const WrapperSpec& spec, const Words& words, size_t i, size_t end) {
    Peeled out;
    int operands = spec.operands;
    bool options = true;
    for (; i < end; ++i) {
      const std::string& v = words[i].value;
      if (options && v == "--") {
        options = false;
      } else if (options && v.size() > 1 && v[0] == '-') {
        if (!ShortOrLongOption(spec, words, &i, end, &out)) return out;
      } else if (spec.assignments &&
                 (v == "-" || AssignmentEquals(words[i]) != std::string::npos)) {
        // env's NAME=value, and `-` (an empty environment)
      } else if (operands > 0) {
        --operands;
      } else {
        out.command = i;
        return out;
      }
    }
    return out;
  }

  // One option word at words[*i] (advancing *i past a separate argument). False when nothing
  // runs after it.
  static bool ShortOrLongOption(const WrapperSpec& spec, const Words& words, size_t* i, size_t end,
                                Peeled* out) {
    const std::string& v = words[*i].value;
    auto argument = [&](std::string inline_arg, bool attached) {
      if (!attached) inline_arg = *i + 1 < end ? words[++*i].value : "";
      return inline_arg;
    };
    if (v[1] == '-') {
      const size_t eq = v.find('=');
      const std::string name = v.substr(0, eq);
      if (Listed(spec.long_arg_options, name)) {
        std::string arg =
            argument(eq == std::string::npos ? "" : v.substr(eq + 1), eq != std::string::npos);
        if (name == "--split-string") out->split_string = arg + " " + Join(words, *i + 1, end);
        return !(name == "--split-string");
      }
      if (!Listed(spec.long_flag_options, name)) out->unknown = true;
      return true;
    }
    for (size_t k = 1; k < v.size(); ++k) {
      const char o = v[k];
      if (spec.no_run_options.find(o) != std::string_view::npos) return false;
      if (spec.arg_options.find(o) != std::string_view::npos) {
        std::string arg = argument(v.substr(k + 1), k + 1 < v.size());
        if (o == 'S' && spec.name == "env") {
          out->split_string = arg + " " + Join(words, *i + 1, end);
          return false;
        }
        return true;
      }
      if (spec.flag_options.find(o) == std::string_view::npos) {
        out->unknown = true;
        return true;
      }
    }
    return true;
  }

  // sh -c STRING runs STRING; without -c a shell runs a script file or reads stdin.
  void Shell(const Words& words, size_t i, size_t end) {
    out_->runs_other = true;
    bool c_mode = false;
    size_t k = i + 1;
    for (; k < end; ++k) {
      const std::string& v = words[k].value;
      if (v == "--" || v == "-") {
        ++k;
        break;
      }
      if (v.size() < 2 || (v[0] != '-' && v[0] != '+')) break;
      if (v[1] == '-') {
        if (v == "--rcfile" || v == "--init-file") ++k;
        continue;
      }
      const bool takes_arg = v.find_first_of("oO", 1) != std::string::npos;
      if (v.find('c', 1) != std::string::npos) c_mode = true;
      if (takes_arg) ++k;
    }
    if (c_mode && k < end) return ShellString(words[k].value);
    out_->opaque = true;
  }

  // find … -exec CMD … ; (also -execdir, -ok, -okdir, and `+` as the end).
  void Find(const Words& words, size_t i, size_t end) {
    for (size_t k = i + 1; k < end; ++k) {
      const std::string& v = words[k].value;
      if (v != "-exec" && v != "-execdir" && v != "-ok" && v != "-okdir") continue;
      out_->runs_other = true;
      size_t stop = k + 1;
      while (stop < end && words[stop].value != ";" && words[stop].value != "+") ++stop;
      Command(words, k + 1, stop);
      k = stop;
    }
  }

  // su -c STRING / --command=STRING; otherwise an interactive shell.
  void Su(const Words& words, size_t i, size_t end) {
    out_->runs_other = true;
    for (size_t k = i + 1; k < end; ++k) {
      const std::string& v = words[k].value;
      if ((v == "-c" || v == "--command") && k + 1 < end) return ShellString(words[k + 1].value);
      if (v.rfind("--command=", 0) == 0) return ShellString(v.substr(10));
      if (v.size() > 2 && v.rfind("-c", 0) == 0) return ShellString(v.substr(2));
    }
    out_->opaque = true;
  }

  // trap STRING SIG, watch [options] STRING…, parallel [options] CMD … ::: args: the command
  // line may start at any plain word; each candidate is a shell string. parallel may also read
  // its commands from stdin.
  void StringRunner(std::string_view name, const Words& words, size_t i, size_t end) {
    out_->runs_other = true;
    if (name == "parallel") out_->opaque = true;
    size_t stop = i + 1;
    while (stop < end && words[stop].value.rfind(":::", 0) != 0) ++stop;
    for (size_t k = i + 1; k < stop && budget_-- > 0; ++k) {
      if (IsOptionLike(words[k]) || words[k].value == "--") continue;
      ShellString(name == "trap" ? words[k].value : Join(words, k, stop));
      if (name == "trap") return;
    }
    if (budget_ <= 0) out_->opaque = true;
  }

  CommandAnalysis* out_;
  int budget_ = kBudget;
};

}  // namespace

CommandAnalysis AnalyzeCommand(std::string_view part) {
  CommandAnalysis out;
  const Words words = SplitWords(part);
  Analyzer(&out).Command(words, 0, words.size());
  return out;
}

}  // namespace agent::daemon::policy
