#include "client/acp/prompt_content.h"

#include <string>

#include "common/protocol.h"
#include "gtest/gtest.h"

namespace agent::client::acp {
namespace {

Json Image(const std::string& mime, const std::string& data) {
  return Json{{"type", "image"}, {"mimeType", mime}, {"data", data}};
}

TEST(PromptContentTest, ImagesAreDecodedBesideTheText) {
  absl::StatusOr<PromptText> p = PromptFromContent(Json::array(
      {Json{{"type", "text"}, {"text", "what is this?"}}, Image("image/png", "iVBORw0K")}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->text, "what is this?");
  ASSERT_EQ(p->images.size(), 1u);
  EXPECT_EQ(p->images[0].media_type, "image/png");
  EXPECT_EQ(p->images[0].data, std::string("\x89PNG\r\n", 6));
  // An image alone is a prompt.
  EXPECT_TRUE(PromptFromContent(Json::array({Image("image/jpeg", "AAAA")})).ok());
}

TEST(PromptContentTest, ImagesTheModelsDoNotTakeAreRefusedNamingTheBlock) {
  auto refused = [](const Json& block) {
    absl::StatusOr<PromptText> p =
        PromptFromContent(Json::array({Json{{"type", "text"}, {"text", "x"}}, block}));
    return p.ok() ? std::string("accepted") : std::string(p.status().message());
  };
  EXPECT_NE(refused(Image("image/tiff", "AAAA")).find("block 1: image type \"image/tiff\""),
            std::string::npos);
  EXPECT_NE(refused(Image("image/png", "not base64!")).find("base64"), std::string::npos);
  EXPECT_NE(refused(Image("image/png", "")).find("base64"), std::string::npos);
  const std::string big((kMaxPromptImageBytes / 3 + 2) * 4, 'A');
  EXPECT_NE(refused(Image("image/png", big)).find("KiB"), std::string::npos);
  Json many = Json::array();
  for (int i = 0; i <= kMaxPromptImages; ++i) many.push_back(Image("image/png", "AAAA"));
  absl::StatusOr<PromptText> p = PromptFromContent(many);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(std::string(p.status().message()).find("at most"), std::string::npos);
}

}  // namespace
}  // namespace agent::client::acp
