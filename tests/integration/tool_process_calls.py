"""Run by a `bash` tool command in test_tool_processes.py: a program a tool started tries the
calls only a person's client may make, and prints what the daemon answered, one per line."""
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpc_client  # noqa: E402


def main(socket_path, workdir):
    pb, stub, channel = grpc_client.connect(socket_path)
    calls = {
        "Approve": lambda: stub.Approve(pb.ApproveRequest(
            session_id="no-such-session", call_id="c", decision=pb.DECISION_ALLOW_ONCE,
            client_name="tool"), timeout=10, metadata=(("agent-person", "1"),)),
        "SetPolicy": lambda: stub.SetPolicy(pb.SetPolicyRequest(
            session_id="no-such-session", mode=pb.POLICY_MODE_YES), timeout=10),
        "TrustProjectRules": lambda: stub.TrustProjectRules(pb.TrustProjectRulesRequest(
            workdir=workdir, rules=["bash(*)"]), timeout=10),
        "ApproveMcpServer": lambda: stub.ApproveMcpServer(pb.ApproveMcpServerRequest(
            workdir=workdir, name="x", target="x", definition="x"), timeout=10),
        # A server of its choosing, run unconfined as the person's own editor's would be.
        "SetSessionMcpServers": lambda: stub.SetSessionMcpServers(
            pb.SetSessionMcpServersRequest(session_id="no-such-session",
                                           servers_json='{"x": {"command": "/bin/true"}}'),
            timeout=10),
    }
    for name, call in calls.items():
        try:
            call()
            print(name, "OK")
        except grpc.RpcError as e:
            print(name, e.code().name, e.details())
    channel.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
