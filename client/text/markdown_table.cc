#include "client/text/markdown_table.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/terminal/terminal_text.h"

namespace agent::client {
namespace {

constexpr char kDim[] = "\x1b[2m";
constexpr char kBold[] = "\x1b[1m";
constexpr char kReset[] = "\x1b[0m";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// "┌─┬─┐" and the like, `left mid right` around runs of ─ as wide as the columns.
std::string Border(const std::vector<int>& widths, const char* left, const char* mid,
                   const char* right, bool color) {
  std::string out = left;
  for (size_t i = 0; i < widths.size(); ++i) {
    out += Repeat("─", widths[i] + 2);
    out += i + 1 < widths.size() ? mid : right;
  }
  return color ? absl::StrCat(kDim, out, kReset) : out;
}

std::string Pad(const std::string& cell, int width, CellAlign a) {
  int room = std::max(0, width - DisplayWidth(cell));
  int before = a == CellAlign::kRight ? room : a == CellAlign::kCenter ? room / 2 : 0;
  return std::string(before, ' ') + cell + std::string(room - before, ' ');
}

}  // namespace

bool IsTableRow(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  std::string_view rest = Trim(line.substr(i));
  return rest.size() >= 2 && rest[0] == '|' && rest.find('|', 1) != std::string_view::npos;
}

bool IsTableDelimiter(std::string_view line) {
  if (!IsTableRow(line)) return false;
  std::vector<std::string> cells = TableCells(line);
  if (cells.empty()) return false;
  for (const std::string& c : cells) {
    std::string_view d = c;
    if (!d.empty() && d.front() == ':') d.remove_prefix(1);
    if (!d.empty() && d.back() == ':') d.remove_suffix(1);
    if (d.empty() || d.find_first_not_of('-') != std::string_view::npos) return false;
  }
  return true;
}

std::vector<std::string> TableCells(std::string_view line) {
  std::string_view s = Trim(line);
  if (!s.empty() && s.front() == '|') s.remove_prefix(1);
  if (!s.empty() && s.back() == '|' && !(s.size() >= 2 && s[s.size() - 2] == '\\')) {
    s.remove_suffix(1);
  }
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (s[i] == '|') {
      cells.emplace_back(Trim(cur));
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  cells.emplace_back(Trim(cur));
  return cells;
}

std::vector<CellAlign> TableAlignments(std::string_view delimiter) {
  std::vector<CellAlign> out;
  for (const std::string& c : TableCells(delimiter)) {
    bool l = !c.empty() && c.front() == ':', r = !c.empty() && c.back() == ':';
    out.push_back(l && r ? CellAlign::kCenter : r ? CellAlign::kRight : CellAlign::kLeft);
  }
  return out;
}

std::vector<std::string> LayoutTable(const std::vector<std::vector<std::string>>& cells,
                                     const std::vector<CellAlign>& align, bool color, int cols) {
  size_t n = 0;
  for (const auto& row : cells) n = std::max(n, row.size());
  std::vector<int> widths(n, 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  int total = 1;
  for (int w : widths) total += w + 3;
  const std::string bar = color ? absl::StrCat(kDim, "│", kReset) : "│";
  std::vector<std::string> out;
  if (cols > 0 && total > cols) {
    for (const auto& row : cells) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i)
        absl::StrAppend(&line, i ? " " + bar + " " : "", row[i]);
      out.push_back(line);
    }
    return out;
  }
  out.push_back(Border(widths, "┌", "┬", "┐", color));
  for (size_t r = 0; r < cells.size(); ++r) {
    std::string line = bar;
    for (size_t i = 0; i < n; ++i) {
      std::string cell = i < cells[r].size() ? cells[r][i] : "";
      CellAlign a = i < align.size() ? align[i] : CellAlign::kLeft;
      std::string padded = Pad(cell, widths[i], a);
      if (r == 0 && color) padded = absl::StrCat(kBold, padded, kReset);
      absl::StrAppend(&line, " ", padded, " ", bar);
    }
    out.push_back(line);
    if (r == 0) out.push_back(Border(widths, "├", "┼", "┤", color));
  }
  out.push_back(Border(widths, "└", "┴", "┘", color));
  return out;
}

}  // namespace agent::client
