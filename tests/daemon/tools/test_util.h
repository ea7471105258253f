// Helpers for the tools tests: a temp workdir per test, file helpers, a StatusIs matcher,
// and a fixture that runs tools through the core registry.
#pragma once

#include <sys/stat.h>

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
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::tools::testing {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;

// The file's content; empty when it cannot be opened (unlike agent::testing::ReadFile).
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
