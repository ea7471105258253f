// `agent proxy --protocol 1`: the remote end of `agent --host`. Started by the client through
// ssh with the channel as stdin/stdout, it reads the request line (proxy_protocol.h), connects
// to this host's daemon as a local `agent` would (Connect's checks: the socket directory's
// owner and the server's peer uid; the daemon started when none answers and the request
// allows it), answers with the reply line, then splices bytes both ways until either side
// closes (proxy_splice.h). It never reads AGENT_HOST: a proxy does not hop further. Not
// thread-safe (one per process).
#pragma once

namespace agent::client {

// True when `word` (argv[1]) is the proxy subcommand.
bool IsProxyCommand(const char* word);

// Runs the proxy; the exit code (0 once either side closed after a good start).
int RunProxy(int argc, char** argv);

}  // namespace agent::client
