// ask_user {question, options?}: the model asks the person and waits for the answer, which is
// the call's result. The question shows on every attached client (a menu in the terminal, a
// permission request in an editor); the first answer wins; with nobody attached it waits as an
// approval waits. Not gated (it changes nothing), never run beside another call (one question
// at a time). A child session gets it only when its agent definition lists it.
#pragma once

#include <memory>

#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

inline constexpr char kAskUserTool[] = "ask_user";
inline constexpr size_t kMaxQuestionOptions = 6;

std::unique_ptr<Tool> NewAskUserTool();

}  // namespace agent::daemon::tools
