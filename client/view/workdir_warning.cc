#include "client/view/workdir_warning.h"

#include <filesystem>

namespace agent::client {
namespace {

std::string Resolved(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  std::string out = ec ? std::filesystem::path(path).lexically_normal().string() : p.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

std::string WideWorkdirWarning(const std::string& workdir, const std::string& home) {
  if (workdir.empty()) return "";
  std::string dir = Resolved(workdir);
  std::string what;
  if (dir == "/") {
    what = "the whole file system";
  } else if (!home.empty() && dir == Resolved(home)) {
    what = "your home directory";
  } else {
    return "";
  }
  return "the agent can read and change everything under " + dir + " (" + what +
         "); start it in a project directory to limit it";
}

}  // namespace agent::client
