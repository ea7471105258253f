#include "daemon/base/random_id.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "common/mutex.h"

namespace agent::daemon {

std::string RandomHexId(int words) {
  static absl::BitGen gen;
  static agent::Mutex mu;
  agent::MutexLock l(&mu);
  std::string id;
  for (int i = 0; i < words; ++i) absl::StrAppendFormat(&id, "%016x", absl::Uniform<uint64_t>(gen));
  return id;
}

}  // namespace agent::daemon
