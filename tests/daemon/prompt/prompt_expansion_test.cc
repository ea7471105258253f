#include "daemon/prompt/prompt_expansion.h"

#include "common/protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class PromptExpansionTest : public ::testing::Test {
 protected:
  PromptExpansion Expand(const std::string& text) {
    ExpansionContext ctx;
    ctx.workdir = dir_.path();
    ctx.commands_dir = dir_.Join("user-commands");
    return ExpandPrompt(ctx, text);
  }
  agent::testing::TempDir dir_;
};

TEST(PromptImagesTest, ImagesBecomeDataUrlsAndWhatTheModelsDoNotTakeIsRefused) {
  google::protobuf::RepeatedPtrField<agent::v1::PromptImage> images;
  agent::v1::PromptImage* png = images.Add();
  png->set_media_type("image/png");
  png->set_data(std::string("\x89PNG", 4));
  absl::StatusOr<std::vector<std::string>> urls = PromptImageUrls(images);
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_THAT(*urls, ElementsAre("data:image/png;base64,iVBORw=="));

  png->set_media_type("image/svg+xml");  // a script in an image is not one the models take
  EXPECT_THAT(std::string(PromptImageUrls(images).status().message()), HasSubstr("image 1"));
  png->set_media_type("image/png");
  png->set_data(std::string(kMaxPromptImageBytes + 1, 'x'));
  EXPECT_TRUE(absl::IsInvalidArgument(PromptImageUrls(images).status()));
  png->set_data("");
  EXPECT_TRUE(absl::IsInvalidArgument(PromptImageUrls(images).status()));
  png->set_data("x");
  for (int i = 0; i < kMaxPromptImages; ++i) *images.Add() = *png;
  EXPECT_THAT(std::string(PromptImageUrls(images).status().message()), HasSubstr("at most"));
}

TEST_F(PromptExpansionTest, PlainTextIsLeftAlone) {
  PromptExpansion e = Expand("hello there");
  EXPECT_EQ(e.model_text, "");
  tools::FileTracker files;
  EXPECT_EQ(ApplyExpansion("hello there", e, files), "hello there");
}

TEST_F(PromptExpansionTest, AMentionedFileCountsAsReadForLaterEdits) {
  const std::string abs = dir_.Join("a.txt");
  agent::testing::WriteFile(abs, "one\n");
  PromptExpansion e = Expand("fix @a.txt");
  EXPECT_THAT(e.model_text, StartsWith("fix @a.txt\n\n<mention path=\"a.txt\""));
  tools::FileTracker files;
  EXPECT_EQ(files.CheckUnchanged(abs, /*must_have_read=*/true).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ApplyExpansion("fix @a.txt", e, files), e.model_text);
  EXPECT_TRUE(files.CheckUnchanged(abs, /*must_have_read=*/true).ok());
  agent::testing::WriteFile(abs, "two\n");
  EXPECT_THAT(files.CheckUnchanged(abs, true).message(), HasSubstr("changed since you read it"));
}

TEST_F(PromptExpansionTest, ACommandsBodyIsExpandedThenItsMentions) {
  agent::testing::WriteFile(dir_.Join(".agent/commands/explain.md"),
                            "---\ndescription: d\n---\nExplain @$1 in $2 words.\n");
  agent::testing::WriteFile(dir_.Join("src/x.py"), "print(1)\n");
  PromptExpansion e = Expand("/explain src/x.py 50");
  EXPECT_THAT(e.model_text, StartsWith("Explain @src/x.py in 50 words.\n\n<mention "));
  EXPECT_THAT(e.model_text, HasSubstr("     1\tprint(1)\n"));
  EXPECT_TRUE(e.warnings.empty());
}

TEST_F(PromptExpansionTest, WarningsOfBoth) {
  agent::testing::WriteFile(dir_.Join(".agent/commands/big.md"), std::string(70000, 'x'));
  PromptExpansion e = Expand("/big @nope");
  EXPECT_EQ(e.model_text, "");
  EXPECT_THAT(e.warnings, ElementsAre(HasSubstr("/big not expanded"),
                                      "@nope: no such file or directory in the project"));
}

}  // namespace
}  // namespace agent::daemon
