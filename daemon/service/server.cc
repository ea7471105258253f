#include "daemon/service/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/paths.h"
#include "common/protocol.h"
#include "common/socket_dir.h"
#include "daemon/checkpoints/shadow_store.h"
#include "daemon/hooks/hook_loader.h"
#include "daemon/policy/personal_rules.h"
#include "daemon/policy/rule_source.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/subagents/subagents.h"
#include "daemon/tools/tool_registry.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_posix.h"

namespace agent::daemon {
namespace {

const tools::ToolRegistry& CoreTools() {
  static const tools::ToolRegistry* registry =
      new tools::ToolRegistry(tools::ToolRegistry::CreateCore());
  return *registry;
}

// How long calls still in flight at shutdown may take (see Run).
constexpr std::chrono::milliseconds kShutdownGrace{250};

void WriteReady(int fd, const std::string& line) {
  if (fd < 0) return;
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

absl::Status ErrnoError(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

Server::Server(ServerOptions options) : options_(std::move(options)) {
  absl::BitGen gen;
  epoch_ = absl::StrFormat("%x-%d", absl::ToUnixMillis(absl::Now()), ::getpid());
}

Server::~Server() {
  if (accept_thread_.joinable()) {
    RequestShutdown();
    accept_thread_.join();
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void Server::RequestShutdown(Stop kind) {
  if (wake_pipe_[1] >= 0) {
    char c = static_cast<char>(kind);
    ssize_t n = ::write(wake_pipe_[1], &c, 1);
    (void)n;
  }
}

absl::Status Server::Bind() {
  if (options_.inherited_fd >= 0) {
    listen_fd_ = options_.inherited_fd;
    return absl::OkStatus();
  }
  const std::string& path = options_.socket_path;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError("socket path too long: " + path);
  }
  // Before anything is created or chmod-ed: a typo in AGENT_SOCKET must not cost a file.
  struct stat st;
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && !S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     " exists and is not a socket; refusing to replace it (check "
                     "AGENT_SOCKET or --socket)"));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  // The directory may be the user's own ($HOME, a project): checked, never chmod-ed.
  if (auto s = EnsureSocketDir(dir); !s.ok()) return s;

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  if (exists) {
    // A live daemon answers; a stale file (the daemon died) refuses and is removed.
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live =
        probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) return absl::AlreadyExistsError("agentd is already running on " + path);
    ::unlink(path.c_str());
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return ErrnoError("socket");
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return ErrnoError("bind " + path);
  }
  ::chmod(path.c_str(), 0600);
  if (::listen(listen_fd_, 128) != 0) return ErrnoError("listen " + path);
  return absl::OkStatus();
}

absl::Status Server::Run() {
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoError("pipe");
  if (auto s = Bind(); !s.ok()) {
    WriteReady(options_.ready_fd, absl::StrCat("error: ", s.message(), "\n"));
    return s;
  }
  SessionDeps deps;
  deps.epoch = epoch_;
  deps.tools = &CoreTools();
  deps.config = options_.config;
  deps.checkpoint_stores = checkpoints::StoresRoot();
  auto confinement = std::make_shared<const sandbox::Sandbox>(
      sandbox::DaemonPolicy(options_.config.sandbox, options_.socket_path));
  deps.sandbox = confinement;
  deps.hook_files = [](const std::string& workdir) { return hooks::DefaultHookFiles(workdir); };
  deps.rules_for = [](const std::string& workdir) -> std::shared_ptr<policy::RuleSource> {
    // The user's config may be a dotfile manager's symlink; the project's settings are
    // repository content and are never followed through one.
    // Its allow rules count only as far as a person trusted them (policy/trusted_rules.h).
    std::string user = ConfigDir() + "/config.json";
    std::string project = ProjectSettingsPath(workdir);
    std::string mine = policy::ProjectLocalSettingsPath(workdir);
    return std::make_shared<policy::FileRuleSource>(
        std::vector<std::string>{user, project, mine}, std::vector<std::string>{user},
        policy::ProjectTrust{project, policy::TrustedRulesPath(), workdir, mine,
                             policy::PersonalRulesPath()});
  };
  llm::TransportOptions transport{options_.config.connect_timeout_ms,
                                  options_.config.idle_timeout_ms, options_.config.max_attempts};
  deps.make_model_client = [transport] { return llm::MakeCurlModelClient(transport); };
  mcp::Registry::Options mcp_options;
  mcp_options.make_transport = [confinement](const mcp::ServerDef& def) {
    return mcp::MakeConfinedTransport(def, confinement.get());
  };
  mcp_options.base_tools = [] { return tools::ToolRegistry::CreateCore(); };
  mcp_ = std::make_unique<mcp::Registry>(std::move(mcp_options));
  subagents::SubagentOptions sub_options;
  sub_options.max_concurrent = options_.config.subagent_max_concurrent;
  sub_options.max_depth = options_.config.subagent_max_depth;
  // Lives through Run: the sessions that use it are reset before it returns.
  auto subagents = std::make_unique<subagents::Subagents>(sub_options);
  deps.tools_for = [mcp = mcp_.get(), sub = subagents.get()](
                       const std::string& workdir, const std::string& session_id,
                       const std::atomic<bool>* cancelled,
                       const std::function<void(const std::string&)>& report) {
    return sub->ToolsFor(mcp->ToolsFor(workdir, session_id, cancelled, report), workdir,
                         session_id);
  };
  deps.session_ended = [mcp = mcp_.get()](const std::string& session_id) {
    mcp->EndSession(session_id);
  };
  mcp_->StartEager();
  sessions_ = std::make_unique<SessionManager>(std::move(deps));
  subagents->set_sessions(sessions_.get());
  service_ = std::make_unique<AgentService>(
      sessions_.get(), epoch_, [this] { RequestShutdown(Stop::kStop); },
      options_.inherited_fd >= 0);
  service_->set_mcp(mcp_.get());
  service_->set_sandbox(confinement);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_) return absl::InternalError("cannot start the gRPC server");

  accept_thread_ = std::thread([this] { AcceptLoop(); });
  WriteReady(options_.ready_fd, "ok\n");
  accept_thread_.join();  // returns when shutdown is requested

  // Stop taking new clients (one still in the backlog is refused at once, not left hanging),
  // end every turn cleanly, then the streams (UNAVAILABLE, "shutting down"): a call that
  // arrives meanwhile on an open connection gets the same answer.
  if (options_.inherited_fd < 0) {
    ::unlink(options_.socket_path.c_str());
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
  sessions_->ShutdownAll(RequestedStop() == Stop::kStop);
  service_->StopWorkers();
  // What is left in flight is quick unary calls (turns, streams and workers have ended), so
  // the deadline only bounds a client that does not close its connection.
  grpc_server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  grpc_server_->Wait();
  sessions_.reset();
  mcp_->Shutdown();  // the servers' process groups end with the daemon
  return absl::OkStatus();
}

Server::Stop Server::RequestedStop() {
  Stop kind = Stop::kRestart;
  char buf[64];
  for (int i = 0; i < 16; ++i) {  // the pipe is non-blocking; a few bytes at most
    ssize_t n = ::read(wake_pipe_[0], buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; ++k) {
      if (buf[k] == static_cast<char>(Stop::kStop)) kind = Stop::kStop;
    }
  }
  return kind;
}

void Server::AcceptLoop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid()) {
      // Another user: refused even if the socket's permissions were loosened.
      ::close(fd);
      continue;
    }
    // gRPC expects a non-blocking fd; a blocking one hangs the handshake.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    grpc::AddInsecureChannelFromFd(grpc_server_.get(), fd);
  }
}

}  // namespace agent::daemon
