// ShowControls: text a person must judge (a command or path in an approval, a diff line, a
// session title, a file name) with what a terminal would act on or hide made visible.
// Defined in terminal_text.cc beside Visible, whose character tables it shares. Pure.
#pragma once

#include <string>
#include <string_view>

namespace agent::client {

// `text` as valid UTF-8 with every character a terminal could act on or hide shown as an escape
// instead of being applied or dropped: ESC and the other C0 controls but '\n' and '\t' as
// \xNN, DEL as \x7f, C1 controls, bidi overrides and isolates (U+202E, U+2066-U+2069) and
// invisible format characters as \uNNNN. Backslashes stay as they are (unlike Visible); '\n'
// and '\t' are the caller's to place.
std::string ShowControls(std::string_view text);

}  // namespace agent::client
