#include "daemon/prompt/system_prompt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/paths.h"
#include "daemon/context/environment.h"

namespace agent::daemon {
namespace {

constexpr char kProse[] =
#include "system_prompt_text.inc"
    ;

constexpr size_t kMaxPromptFile = 64 * 1024;

// The user's own prompt file: trusted (it is named in their config), but capped.
absl::StatusOr<std::string> ReadPromptFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read system_prompt_file ", path));
  struct stat st;
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[8192];
    ssize_t n;
    while (out.size() < kMaxPromptFile && (n = ::read(fd, buf, sizeof(buf))) > 0) {
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (out.size() > kMaxPromptFile) out.resize(kMaxPromptFile);
  return out;
}

}  // namespace

std::string BuiltinPrompt(const std::string& environment) {
  return absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(kProse),
                             {{"{environment}", environment}});
}

BuiltSystemPrompt BuildSystemPrompt(const SystemPromptInputs& in) {
  BuiltSystemPrompt out;
  const std::string cwd = in.cwd.empty() ? in.project_root : in.cwd;
  const std::string env =
      context::RenderEnvironment(context::CollectEnvironment(in.project_root, cwd, in.now));
  out.text = BuiltinPrompt(env);
  if (!in.config.system_prompt_file.empty()) {
    absl::StatusOr<std::string> own = ReadPromptFile(in.config.system_prompt_file);
    if (own.ok()) {
      // The user's file may use {environment} too.
      out.text =
          absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(*own), {{"{environment}", env}});
    } else {
      out.problem = std::string(own.status().message());
    }
  }
  if (!in.config.system_prompt_append.empty()) {
    absl::StrAppend(&out.text, "\n\n", in.config.system_prompt_append);
  }
  out.base_chars = out.text.size();
  context::InstructionOptions o;
  o.global_file = in.global_instructions;
  o.project_root = in.project_root;
  o.cwd = cwd;
  o.fallback_names = in.config.instruction_fallbacks;
  o.max_bytes = in.config.instruction_max_bytes;
  out.instructions = context::DiscoverInstructions(o);
  std::string section = context::RenderInstructions(out.instructions);
  if (!section.empty()) absl::StrAppend(&out.text, "\n\n", section);
  return out;
}

BuiltSystemPrompt BuildSystemPromptFor(const std::string& workdir, const std::string& cwd,
                                       absl::Time now) {
  SystemPromptInputs in;
  in.project_root = workdir;
  in.cwd = cwd;
  in.now = now;
  in.config = context::LoadContextConfig();
  in.global_instructions = ConfigDir() + "/AGENTS.md";
  BuiltSystemPrompt out = BuildSystemPrompt(in);
  if (!in.config.problem.empty()) {
    out.problem = out.problem.empty() ? in.config.problem : out.problem + "; " + in.config.problem;
  }
  return out;
}

}  // namespace agent::daemon
