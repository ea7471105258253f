// Prompt expansion: what a prompt a person typed means, as SendPromptRequest.expand asks.
// First a leading `/name` of a custom command becomes the command's body (custom_commands.h),
// then the `@path` mentions of the result attach the files and listings they name
// (mentions.h). The text the clients see (UserMessage, queued prompts) stays as typed; the
// transcript's user message is the expanded text. Pure functions over the filesystem, except
// ApplyExpansion, which records reads in the given tracker; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "daemon/policy/rules.h"
#include "daemon/prompt/mentions.h"
#include "daemon/tools/file_tracker.h"

namespace agent::daemon {

struct PromptExpansion {
  std::string model_text;  // the transcript's user message; empty: the text as typed
  std::vector<MentionRead> reads;
  std::vector<std::string> warnings;  // for SendPromptResponse.warnings
  // The prompt's images (SendPromptRequest.images) as data: URLs, parts of the user message.
  std::vector<std::string> image_urls;
};

struct ExpansionContext {
  std::string workdir;       // the project root, absolute and canonical
  std::string cwd;           // where the session was started, inside workdir; "": workdir
  std::string commands_dir;  // the user's commands (UserCommandsDir())
  absl::StatusOr<policy::RuleSet> rules = policy::RuleSet{};
  MentionLimits limits;
};

PromptExpansion ExpandPrompt(const ExpansionContext& ctx, std::string_view text);

// A prompt's images as data: URLs. InvalidArgument for more than kMaxPromptImages, one over
// kMaxPromptImageBytes or empty, or a media type other than PNG, JPEG, GIF and WebP (what
// every provider takes), naming the image.
absl::StatusOr<std::vector<std::string>> PromptImageUrls(
    const google::protobuf::RepeatedPtrField<agent::v1::PromptImage>& images);

// The user message for the transcript (`typed` when nothing was expanded); records the files
// the expansion attached as read in `files`. Called when the prompt enters the transcript, so
// the change check of a later edit compares with what the model saw.
std::string ApplyExpansion(const std::string& typed, const PromptExpansion& expansion,
                           tools::FileTracker& files);

}  // namespace agent::daemon
