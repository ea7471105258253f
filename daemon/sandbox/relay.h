// Relay: the bytes of two connected sockets, both ways, until each side has ended, through
// pipes with splice(2), so they never pass through this process's memory (the proxy and the
// bridge each relay every byte a confined command downloads). Used by the daemon's proxy
// (network_proxy.h) and by agentd-net-bridge, which links nothing but libc, so this file uses
// nothing else. Thread-safe (each call its own pipes).
#pragma once

namespace agent::daemon::sandbox {

// Blocks until both directions ended (an end-of-file or an error each) or `stop_fd` (may be
// -1) becomes readable. Half-closes: an end one way is passed on as shutdown(SHUT_WR) the
// other way. Closes neither socket.
void Relay(int a, int b, int stop_fd);

}  // namespace agent::daemon::sandbox
