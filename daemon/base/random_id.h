// Random identifiers (session ids, an editor request's id): lowercase hex from a process-wide
// generator.
#pragma once

#include <string>

namespace agent::daemon {

// 16 hex digits per 64-bit word, `words` of them. Thread-safe.
std::string RandomHexId(int words);

}  // namespace agent::daemon
