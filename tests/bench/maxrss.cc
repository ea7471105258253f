// maxrss: runs a command and writes "<max RSS in KB> <exit code>" to RESULT_FILE.
//
//   maxrss RESULT_FILE PROGRAM [ARGS...]
//
// Why not the rusage a Python parent gets from wait4: Python starts children with vfork (or
// clone with CLONE_VM), so until exec the child runs in the parent's address space, and Linux
// folds that address space's high-water RSS into the child's ru_maxrss at exec. A child of
// a 40 MB Python process "used" 40 MB before it ran a single instruction of its own. This
// program is small (a few MB) and forks, so the figure it reports is the command's own, plus
// at most this program's RSS at fork time.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: maxrss RESULT_FILE PROGRAM [ARGS...]\n");
    return 2;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("maxrss: fork");
    return 2;
  }
  if (pid == 0) {
    ::execv(argv[2], argv + 2);
    std::perror("maxrss: exec");
    ::_exit(127);
  }
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      std::perror("maxrss: wait4");
      return 2;
    }
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::FILE* f = std::fopen(argv[1], "w");
  if (f == nullptr) return 2;
  std::fprintf(f, "%ld %d\n", ru.ru_maxrss, code);
  std::fclose(f);
  return code;
}
