"""agentd's API from Python, with stubs generated on first use by Debian's protoc and
grpc_python_plugin (python3-grpcio and python3-protobuf are Debian's too). Used by tests
that act as a second client."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "..", "..", "proto")
_gen = None


def stubs():
    """(agent_pb2, agent_pb2_grpc), generated once per process into a temp dir."""
    global _gen
    if _gen is None:
        out = tempfile.mkdtemp(prefix="agent-pb-")
        subprocess.run(["protoc", "-I", PROTO_ROOT, "--python_out", out,
                        "--grpc_out", out, "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin",
                        os.path.join(PROTO_ROOT, "agent", "v1", "agent.proto")], check=True)
        sys.path.insert(0, out)
        from agent.v1 import agent_pb2, agent_pb2_grpc  # noqa: E402
        _gen = (agent_pb2, agent_pb2_grpc)
    return _gen


def connect(socket_path):
    import grpc
    pb, pb_grpc = stubs()
    channel = grpc.insecure_channel("unix:" + socket_path)
    return pb, pb_grpc.AgentDaemonStub(channel), channel


def cancel(socket_path, session_id, client="test-canceller"):
    pb, stub, channel = connect(socket_path)
    try:
        return stub.Cancel(pb.CancelRequest(session_id=session_id, client_name=client), timeout=10)
    finally:
        channel.close()
