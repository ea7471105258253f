#include "client/link/one_shot_runs.h"

#include <fstream>
#include <vector>

#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::client {
namespace {

// Bounded read: past this the file is rewritten with the newest ids.
constexpr std::streamoff kMaxFileBytes = 256 << 10;

std::vector<std::string> ReadIds(const std::string& path) {
  std::vector<std::string> ids;
  std::ifstream in(path);
  std::string line;
  std::streamoff read = 0;
  while (read <= 2 * kMaxFileBytes && std::getline(in, line)) {
    read += static_cast<std::streamoff>(line.size()) + 1;
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

}  // namespace

std::string OneShotRunsPath() { return StateDir() + "/one-shot-sessions"; }

void RememberOneShot(const std::string& path, const std::string& id) {
  if (id.empty() || id.find('\n') != std::string::npos) return;
  (void)MakeDirs(path.substr(0, path.find_last_of('/')));
  {
    std::ofstream out(path, std::ios::app);
    out << id << '\n';
    if (!out || out.tellp() <= kMaxFileBytes) return;
  }
  // Rewritten with the newest ids filling half the bound, so that rewrites stay rare.
  std::vector<std::string> ids = ReadIds(path);
  size_t first = ids.size(), bytes = 0;
  while (first > 0 && ids.size() - first < kMaxOneShotIds &&
         static_cast<std::streamoff>(bytes + ids[first - 1].size() + 1) <= kMaxFileBytes / 2) {
    bytes += ids[--first].size() + 1;
  }
  std::string text;
  for (size_t i = first; i < ids.size(); ++i) text += ids[i] + "\n";
  (void)WriteFileAtomically(path, text);
}

std::set<std::string> OneShotSessions(const std::string& path) {
  std::vector<std::string> ids = ReadIds(path);
  return std::set<std::string>(ids.begin(), ids.end());
}

}  // namespace agent::client
