#include "absl/strings/str_cat.h"
#include "daemon/tools/ask_user.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxQuestionChars = 2000;
constexpr size_t kMaxOptionChars = 200;

Json AskUserSchema() {
  Json options = {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description", "2 to 6 short choices; the user may also answer in words"}};
  return FunctionSchema(kAskUserTool,
                        "Ask the user when you cannot go on well without their choice; waits "
                        "for the answer. Decide yourself what is easy to change later.",
                        {{"question", Property("string")}, {"options", options}}, {"question"});
}

class AskUserTool : public DeclaredTool {
 public:
  AskUserTool() : DeclaredTool(kAskUserTool, /*gated=*/false, AskUserSchema()) {}
  // A person answers one question at a time.
  bool Concurrent() const override { return false; }

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    const std::string question = GetString(args, "question");
    if (question.find_first_not_of(" \t\n") == std::string::npos) {
      return ErrorOutcome(absl::InvalidArgumentError("ask_user: question is empty"));
    }
    if (question.size() > kMaxQuestionChars) {
      return ErrorOutcome(absl::InvalidArgumentError(
          absl::StrCat("ask_user: the question is over ", kMaxQuestionChars, " characters")));
    }
    std::vector<std::string> options;
    if (auto it = args.find("options"); it != args.end() && !it->is_null()) {
      if (!it->is_array()) {
        return ErrorOutcome(absl::InvalidArgumentError("ask_user: options must be a list"));
      }
      for (const Json& o : *it) {
        if (!o.is_string() || o.get<std::string>().empty() ||
            o.get<std::string>().size() > kMaxOptionChars) {
          return ErrorOutcome(absl::InvalidArgumentError(
              absl::StrCat("ask_user: each option is a non-empty string of at most ",
                           kMaxOptionChars, " characters")));
        }
        options.push_back(o.get<std::string>());
      }
      if (options.size() == 1 || options.size() > kMaxQuestionOptions) {
        return ErrorOutcome(absl::InvalidArgumentError(
            absl::StrCat("ask_user: give 2 to ", kMaxQuestionOptions, " options, or none")));
      }
    }
    if (!ctx.ask_user) {
      return ErrorOutcome(absl::FailedPreconditionError(
          "nobody can answer questions in this session; decide yourself and say what you "
          "chose"));
    }
    QuestionAnswer a = ctx.ask_user(question, options);
    switch (a.kind) {
      case QuestionAnswer::Kind::kAnswered:
        return TextOutcome(absl::StrCat("The user answered: ", a.text));
      case QuestionAnswer::Kind::kDeclined:
        return ToolOutcome{
            TextOutcome(absl::StrCat("The user did not answer",
                                     a.text.empty() ? "" : absl::StrCat(": ", a.text),
                                     ". Decide yourself and say what you chose."))
                .content,
            true};
      case QuestionAnswer::Kind::kCancelled:
        break;
    }
    return ToolOutcome{"The question was cancelled before anyone answered.", true};
  }
};

}  // namespace

std::unique_ptr<Tool> NewAskUserTool() { return std::make_unique<AskUserTool>(); }

}  // namespace agent::daemon::tools
