#include "daemon/context/prompt_text.h"

#include <algorithm>

#include "common/utf8.h"

namespace agent::daemon::context {

std::string OneLinePromptText(std::string_view s, size_t max_bytes) {
  const std::string valid = ToValidUtf8(s);
  std::string out;
  out.reserve(std::min(valid.size(), max_bytes));
  for (size_t i = 0; i < valid.size();) {
    const Utf8Unit u = Utf8UnitAt(valid, i);
    std::string_view ch(valid.data() + i, u.len);
    const unsigned char b0 = static_cast<unsigned char>(ch[0]);
    const bool c0 = b0 < 0x20 || b0 == 0x7F;
    const bool c1 = u.len == 2 && b0 == 0xC2 && static_cast<unsigned char>(ch[1]) <= 0x9F;
    const bool separator = ch == "\xE2\x80\xA8" || ch == "\xE2\x80\xA9";
    if (c0 || c1 || separator) ch = "?";
    if (out.size() + ch.size() > max_bytes) break;
    out.append(ch);
    i += u.len;
  }
  return out;
}

}  // namespace agent::daemon::context
