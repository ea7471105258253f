#include "daemon/session/deferred_writes.h"

#include <vector>

namespace agent::daemon {
namespace {

thread_local std::vector<DeferredWriter*> t_deferred;

}  // namespace

void DeferWrite(DeferredWriter* w) { t_deferred.push_back(w); }

void RunDeferredWrites() {
  if (t_deferred.empty()) return;
  std::vector<DeferredWriter*> now;
  now.swap(t_deferred);
  for (DeferredWriter* w : now) w->StartDeferredWrite();
  // Hand the buffer back so a streaming turn does not allocate one per delta.
  now.clear();
  if (t_deferred.empty()) t_deferred.swap(now);
}

}  // namespace agent::daemon
