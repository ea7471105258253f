#include "daemon/prompt/prompt_expansion.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/protocol.h"
#include "common/utf8.h"
#include "daemon/prompt/custom_commands.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon {

PromptExpansion ExpandPrompt(const ExpansionContext& ctx, std::string_view text) {
  PromptExpansion out;
  std::string warning;
  std::optional<std::string> command =
      ExpandCustomCommand(ctx.workdir, ctx.commands_dir, text, &warning);
  if (!warning.empty()) out.warnings.push_back(ToValidUtf8(warning));
  // A command file need not be UTF-8; the transcript must be.
  const std::string base = command.has_value() ? ToValidUtf8(*command) : std::string(text);
  MentionExpansion m = ExpandMentions(ctx.workdir, base, ctx.rules, ctx.limits, ctx.cwd);
  out.reads = std::move(m.reads);
  for (std::string& w : m.warnings) out.warnings.push_back(std::move(w));
  if (command.has_value() || !m.attachments.empty()) {
    std::string_view kept = base;
    // The attachments start with their own blank line.
    while (!m.attachments.empty() && !kept.empty() && kept.back() == '\n') kept.remove_suffix(1);
    out.model_text = absl::StrCat(tools::AbslView(kept), m.attachments);
  }
  return out;
}

std::string ApplyExpansion(const std::string& typed, const PromptExpansion& expansion,
                           tools::FileTracker& files) {
  for (const MentionRead& r : expansion.reads) files.RecordRead(r.abs_path, r.content);
  return expansion.model_text.empty() ? typed : expansion.model_text;
}

absl::StatusOr<std::vector<std::string>> PromptImageUrls(
    const google::protobuf::RepeatedPtrField<v1::PromptImage>& images) {
  if (images.size() > kMaxPromptImages) {
    return absl::InvalidArgumentError(absl::StrCat("a prompt carries at most ", kMaxPromptImages,
                                                   " images, not ", images.size()));
  }
  std::vector<std::string> urls;
  for (int i = 0; i < images.size(); ++i) {
    const v1::PromptImage& image = images[i];
    const std::string& type = image.media_type();
    if (type != "image/png" && type != "image/jpeg" && type != "image/gif" &&
        type != "image/webp") {
      return absl::InvalidArgumentError(absl::StrCat("image ", i + 1, ": type \"", type,
                                                     "\" is not one the models take (image/png, "
                                                     "image/jpeg, image/gif, image/webp)"));
    }
    if (image.data().empty() || image.data().size() > kMaxPromptImageBytes) {
      return absl::InvalidArgumentError(absl::StrCat("image ", i + 1, ": ", image.data().size(),
                                                     " bytes; an image has 1 to ",
                                                     kMaxPromptImageBytes, " bytes"));
    }
    urls.push_back(absl::StrCat("data:", type, ";base64,", absl::Base64Escape(image.data())));
  }
  return urls;
}

}  // namespace agent::daemon
