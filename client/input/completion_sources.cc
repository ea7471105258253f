#include "client/input/completion_sources.h"

#include <chrono>
#include <memory>
#include <set>

#include "absl/time/clock.h"
#include "client/input/project_files.h"
#include "grpcpp/client_context.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr auto kCommandsDeadline = std::chrono::milliseconds(500);
constexpr absl::Duration kFilesFresh = absl::Seconds(5);

struct FileCache {
  absl::Time at = absl::InfinitePast();
  std::vector<std::string> files;
};

}  // namespace

std::vector<std::string> FilesFromDirectory(std::vector<std::string> root_relative,
                                            const std::string& workdir,
                                            const std::string& session_cwd) {
  if (session_cwd.size() <= workdir.size() + 1 ||
      session_cwd.compare(0, workdir.size(), workdir) != 0 || session_cwd[workdir.size()] != '/') {
    return root_relative;
  }
  const std::string prefix = session_cwd.substr(workdir.size() + 1) + "/";
  std::vector<std::string> here;
  for (const std::string& f : root_relative) {
    if (f.compare(0, prefix.size(), prefix) == 0) here.push_back(f.substr(prefix.size()));
  }
  // A root path that names a file here too would mean the one here: not offered.
  const std::set<std::string> shadowed(here.begin(), here.end());
  for (std::string& f : root_relative) {
    if (f.compare(0, prefix.size(), prefix) != 0 && shadowed.count(f) == 0) {
      here.push_back(std::move(f));
    }
  }
  return here;
}

CompletionSources DaemonCompletionSources(std::function<v1::AgentDaemon::StubInterface&()> stub,
                                          const std::string& workdir,
                                          const std::string& session_cwd) {
  CompletionSources s;
  s.cwd = workdir;
  s.custom_commands = [stub, workdir]() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kCommandsDeadline);
    v1::ListCommandsRequest req;
    req.set_workdir(workdir);
    v1::ListCommandsResponse resp;
    std::vector<CommandCandidate> out;
    if (!stub().ListCommands(&ctx, req, &resp).ok()) return out;
    for (const v1::CustomCommand& c : resp.commands()) out.push_back({c.name(), c.description()});
    return out;
  };
  auto cache = std::make_shared<FileCache>();
  s.project_files = [cache, workdir, session_cwd]() {
    absl::Time now = absl::Now();
    if (now - cache->at > kFilesFresh) {
      cache->files = FilesFromDirectory(ListProjectFiles(workdir), workdir, session_cwd);
      cache->at = now;
    }
    return cache->files;
  };
  return s;
}

}  // namespace agent::client
