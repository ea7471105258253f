#include "client/completion_sources.h"

#include <chrono>
#include <memory>

#include "absl/time/clock.h"
#include "client/project_files.h"
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

CompletionSources DaemonCompletionSources(std::function<v1::AgentDaemon::StubInterface&()> stub,
                                          const std::string& workdir) {
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
  s.project_files = [cache, workdir]() {
    absl::Time now = absl::Now();
    if (now - cache->at > kFilesFresh) {
      cache->files = ListProjectFiles(workdir);
      cache->at = now;
    }
    return cache->files;
  };
  return s;
}

}  // namespace agent::client
