#include "client/acp/prompt_content.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/protocol.h"

namespace agent::client::acp {
namespace {

// file:///a/b -> /a/b; anything else as given.
std::string PathOfUri(const std::string& uri) {
  constexpr std::string_view kFile = "file://";
  if (uri.rfind(kFile, 0) == 0) return uri.substr(kFile.size());
  return uri;
}

std::string Fence(const std::string& text) {
  size_t run = 0, best = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return std::string(std::max<size_t>(3, best + 1), '`');
}

// The image of block `i`, decoded and within the limits the daemon checks too.
absl::StatusOr<PromptText::Image> ImageOf(const Json& b, size_t i) {
  PromptText::Image image{GetString(b, "mimeType"), ""};
  if (image.media_type != "image/png" && image.media_type != "image/jpeg" &&
      image.media_type != "image/gif" && image.media_type != "image/webp") {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt block ", i, ": image type \"", image.media_type,
                     "\" is not supported (png, jpeg, gif and webp are)"));
  }
  const std::string encoded = GetString(b, "data");
  if (encoded.size() / 4 * 3 > kMaxPromptImageBytes + 3) {
    return absl::InvalidArgumentError(absl::StrCat("prompt block ", i, ": the image is over ",
                                                   kMaxPromptImageBytes / 1024, " KiB"));
  }
  if (encoded.empty() || !absl::Base64Unescape(encoded, &image.data) ||
      image.data.size() > kMaxPromptImageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("prompt block ", i,
                                                   ": the image's data is not base64 of at most ",
                                                   kMaxPromptImageBytes / 1024, " KiB"));
  }
  return image;
}

}  // namespace

absl::StatusOr<PromptText> PromptFromContent(const Json& blocks) {
  if (!blocks.is_array() || blocks.empty()) {
    return absl::InvalidArgumentError("prompt must be a non-empty list of content blocks");
  }
  PromptText out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Json& b = blocks[i];
    std::string type = b.is_object() ? GetString(b, "type") : "";
    std::string piece;
    if (type == "text") {
      piece = GetString(b, "text");
    } else if (type == "resource" && b.contains("resource") && b["resource"].is_object() &&
               b["resource"].contains("text") && b["resource"]["text"].is_string()) {
      const Json& r = b["resource"];
      std::string text = GetString(r, "text"), fence = Fence(text);
      piece = absl::StrCat("File ", PathOfUri(GetString(r, "uri")), ":\n", fence, "\n", text,
                           text.empty() || text.back() == '\n' ? "" : "\n", fence);
      out.typed_only = false;
    } else if (type == "resource_link") {
      piece = PathOfUri(GetString(b, "uri"));
      out.typed_only = false;
    } else if (type == "image") {
      if (out.images.size() >= static_cast<size_t>(kMaxPromptImages)) {
        return absl::InvalidArgumentError(
            absl::StrCat("prompt block ", i, ": at most ", kMaxPromptImages, " images a prompt"));
      }
      absl::StatusOr<PromptText::Image> image = ImageOf(b, i);
      if (!image.ok()) return image.status();
      out.images.push_back(*std::move(image));
      continue;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "prompt block ", i, ": type \"", type.empty() ? "?" : type,
          "\" is not supported (text, image, resource with text, and resource_link are)"));
    }
    if (!out.text.empty() && !piece.empty()) out.text += "\n\n";
    out.text += piece;
  }
  if (out.text.find_first_not_of(" \t\r\n") == std::string::npos && out.images.empty()) {
    return absl::InvalidArgumentError("the prompt is empty");
  }
  return out;
}

}  // namespace agent::client::acp
