// What a hook costs a tool call beyond the hook process's own run time (goal: <= 5 ms).
// For N calls, times SessionHooks::BeforeTool with one matching PreToolUse hook (`exit 0`):
// reading the config, the JSON on stdin, the process in its own group with pipes and a
// timeout, the decision. Beside it, the same command started bare (posix_spawn of
// /bin/sh -c 'exit 0', then waitpid): the hook process's own run time. Prints both medians and
// the difference. Also the cost of a call no hook matches (the config read only).
//
//   build/bin/hook_bench [N]   (default 200)
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/hooks/session_hooks.h"

namespace {

using Clock = std::chrono::steady_clock;
using agent::Json;
namespace hooks = agent::daemon::hooks;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double BareRun() {
  const char* argv[] = {"/bin/sh", "-c", "exit 0", nullptr};
  const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
  const auto start = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv),
                  const_cast<char* const*>(envp)) != 0) {
    std::abort();
  }
  int status;
  waitpid(pid, &status, 0);
  return Ms(Clock::now() - start);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  const std::string dir =
      std::filesystem::temp_directory_path() / ("hook-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir + "/project");
  {
    std::ofstream(dir + "/config.json")
        << R"({"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"command": "exit 0"}]}]}})";
  }
  hooks::HookFiles files{dir + "/config.json", dir + "/project", dir + "/trusted-hooks.json"};
  hooks::SessionHooks h(
      {"bench", dir + "/project", dir + "/t.json", false, false}, files,
      [] {
        return hooks::HookContext{"default", {"PATH=/usr/bin:/bin"}, ""};
      },
      [](const std::string& text, bool) { std::fprintf(stderr, "%s\n", text.c_str()); });
  const Json input{{"command", "ls -la"}};
  std::vector<double> hooked, bare, unmatched;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    hooks::ToolGuard g = h.BeforeTool("bash", input, "call_" + std::to_string(i));
    hooked.push_back(Ms(Clock::now() - start));
    if (g.failed) return 1;
    bare.push_back(BareRun());
    start = Clock::now();
    h.BeforeTool("read_file", input, "call_r");
    unmatched.push_back(Ms(Clock::now() - start));
  }
  std::filesystem::remove_all(dir);
  const double hm = Median(hooked), bm = Median(bare);
  std::printf("hook_bench: %d calls, medians\n", n);
  std::printf("  call with one PreToolUse hook   %7.3f ms\n", hm);
  std::printf("  the hook process alone (bare)   %7.3f ms\n", bm);
  std::printf("  cost over the hook's own run    %7.3f ms  (goal <= 5 ms)\n", hm - bm);
  std::printf("  call no hook matches            %7.3f ms\n", Median(unmatched));
  return 0;
}
