// An ACP prompt (a list of content blocks) as the one text the daemon's SendPrompt takes:
// text blocks as they are, embedded resources (the editor's selection or an open file,
// "embeddedContext") as a fenced block naming the file, resource links as the file's path,
// images (base64, as ACP sends them) decoded for SendPromptRequest.images. Audio and binary
// resources are refused (initialize does not offer them). Pure.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::client::acp {

struct PromptText {
  std::string text;
  // True when the prompt holds only what the person typed (text blocks): then `@path` and a
  // leading `/command` are expanded as in a terminal; never inside a file's embedded text.
  bool typed_only = true;
  struct Image {
    std::string media_type;
    std::string data;  // the image's bytes
  };
  std::vector<Image> images;
};

// InvalidArgument naming the block that cannot be sent: among them an image whose type the
// models do not take, whose base64 is broken, that is over kMaxPromptImageBytes, or past the
// kMaxPromptImages-th.
absl::StatusOr<PromptText> PromptFromContent(const Json& blocks);

}  // namespace agent::client::acp
