"""The scripted model server with TCP_NODELAY on its connections, for benchmarks.

http.server writes a streamed answer in many small sends; with Nagle's algorithm on, each one
after the first waits for the client's delayed ACK (40 ms on Linux), so a stock
scripted_model.py takes ~45 ms per model request, which would swamp the agent's own
milliseconds per step. Real providers' servers disable Nagle. This sets the standard library's
own switch for it (StreamRequestHandler.disable_nagle_algorithm) and changes nothing else.
Same command line as scripted_model.py.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model_server"))
import scripted_model  # noqa: E402

scripted_model.Handler.disable_nagle_algorithm = True

if __name__ == "__main__":
    sys.exit(scripted_model.main())
