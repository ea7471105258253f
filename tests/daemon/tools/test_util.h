// Helpers for the tools tests: a temp workdir per test, file helpers, a StatusIs matcher,
// and a fixture that runs tools through the core registry.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent::daemon::tools::testing {

// mkdtemp'd directory, canonical (so it compares equal to what ResolveInside returns),
// removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/agent-tools-test-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      return;
    }
    std::error_code ec;
    path_ = std::filesystem::canonical(made, ec).string();
    if (ec) path_ = made;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    // Tests chmod some files; make sure removal still works.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

using ::agent::testing::StatusIs;

// A workdir, a tracker and the core tools, for calling tools as the session would.
class ToolTest : public ::testing::Test {
 protected:
  ToolTest() : registry_(ToolRegistry::CreateCore()) {
    ctx_.workdir = dir_.path();
    ctx_.files = &files_;
  }

  ToolOutcome Call(std::string_view tool, const Json& args) {
    const Tool* t = registry_.Find(tool);
    if (t == nullptr) {
      ADD_FAILURE() << "no tool " << tool;
      return {};
    }
    return t->Run(args, ctx_);
  }

  std::string Path(const std::string& rel) const { return dir_.Join(rel); }
  void Write(const std::string& rel, const std::string& content) {
    WriteFile(dir_.Join(rel), content);
  }

  TempDir dir_;
  FileTracker files_;
  ToolContext ctx_;
  ToolRegistry registry_;
};

}  // namespace agent::daemon::tools::testing
