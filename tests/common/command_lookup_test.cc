#include "common/command_lookup.h"

#include <sys/stat.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;

TEST(CommandLookupTest, AbsoluteEntriesOfThePathOnlyInOrder) {
  TempDir dir;
  WriteFile(dir.Join("a/tool"), "#!/bin/sh\n");
  WriteFile(dir.Join("b/tool"), "#!/bin/sh\n");
  WriteFile(dir.Join("a/plain"), "not executable\n");
  ::chmod(dir.Join("a/tool").c_str(), 0755);
  ::chmod(dir.Join("b/tool").c_str(), 0755);
  const std::string path = "relative:" + dir.Join("a") + ":" + dir.Join("b");
  auto found = FindCommandOnPath("tool", path);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, dir.Join("a/tool"));
  EXPECT_TRUE(absl::IsNotFound(FindCommandOnPath("plain", path).status()));
  EXPECT_TRUE(absl::IsNotFound(FindCommandOnPath("missing", path).status()));
}

TEST(CommandLookupTest, ACommandWithASlashIsUsedAsWritten) {
  auto found = FindCommandOnPath("./server.py", "/usr/bin");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, "./server.py");
}

}  // namespace
}  // namespace agent
