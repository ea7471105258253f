// Factories for the core tools, one per file (read_file_tool.cc, ...). Each returned
// tool is stateless and safe to Run from several threads at once.
#pragma once

#include <memory>

#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

std::unique_ptr<Tool> NewReadFileTool();
std::unique_ptr<Tool> NewListDirTool();
std::unique_ptr<Tool> NewFindFilesTool();
std::unique_ptr<Tool> NewSearchTool();
std::unique_ptr<Tool> NewWriteFileTool();
std::unique_ptr<Tool> NewEditFileTool();
std::unique_ptr<Tool> NewBashTool();
std::unique_ptr<Tool> NewBashJobTool();
std::unique_ptr<Tool> NewAskUserTool();

}  // namespace agent::daemon::tools
