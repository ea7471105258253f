// Markdown tables (GitHub's: "| a | b |" rows under a "|---|:-:|" delimiter row), laid out
// with box-drawing lines once all their rows are known. Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::client {

// "| a | b |": starts with '|' (after up to 3 spaces) and has another one.
bool IsTableRow(std::string_view line);
// "|---|:--:|--:|": every cell dashes with optional colons.
bool IsTableDelimiter(std::string_view line);
// The cells of a row, trimmed; "\|" is a literal bar.
std::vector<std::string> TableCells(std::string_view line);

enum class CellAlign { kLeft, kCenter, kRight };
std::vector<CellAlign> TableAlignments(std::string_view delimiter);

// The table as rows of text (no '\n'). `cells` are already styled (escapes take no width);
// the first row is the header (bold when `color`). When the boxed table would be wider than
// `cols` (> 0), the rows are given unboxed, cells joined by " │ ", for the caller to wrap.
std::vector<std::string> LayoutTable(const std::vector<std::vector<std::string>>& cells,
                                     const std::vector<CellAlign>& align, bool color, int cols);

}  // namespace agent::client
