#!/usr/bin/python3
"""One agent turn over agentd's gRPC API, from Python.

Connects to a running agentd, checks its health, creates a session, attaches to it, sends
a prompt, answers approval requests, and exits when the turn ends:

    AGENT_SOCKET=/path/to/agentd.sock /usr/bin/python3 agent_example.py "fix the typo"

Needs Debian's python3-grpcio and python3-protobuf, and protoc and grpc_python_plugin
(packages protobuf-compiler and protobuf-compiler-grpc): the stubs are generated from
agent.proto into a temp dir on every run, so nothing generated is kept.

Exit code: 0 done, 1 error, 3 step limit, 130 cancelled, 2 the daemon could not be used.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO = os.path.join(HERE, "..", "..", "..", "proto", "agent", "v1", "agent.proto")
CLIENT_NAME = "example-python"
CALL_TIMEOUT_S = 10
EXIT_FOR_OUTCOME = {"DONE": 0, "ERROR": 1, "MAX_STEPS": 3, "CANCELLED": 130}
EXIT_UNUSABLE = 2


def default_socket():
    """Where agentd listens: the same search as the agent CLI."""
    if os.environ.get("AGENT_SOCKET"):
        return os.environ["AGENT_SOCKET"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "agent", "agentd.sock")
    return "/tmp/agent-%d/agentd.sock" % os.getuid()


def load_stubs(proto_file, out_dir):
    """Compiles agent.proto into out_dir and imports (agent_pb2, agent_pb2_grpc)."""
    proto_file = os.path.abspath(proto_file)
    subprocess.run(["protoc", "-I", os.path.dirname(proto_file),
                    "--python_out", out_dir, "--grpc_out", out_dir,
                    "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin", proto_file],
                   check=True)
    sys.path.insert(0, out_dir)
    import agent_pb2
    import agent_pb2_grpc
    return agent_pb2, agent_pb2_grpc


def check_health(channel):
    """Asks the standard grpc.health.v1 service whether the server is SERVING.

    python3-grpcio does not ship the grpc_health module, so the call is made generically:
    a HealthCheckRequest for the whole server (service "") encodes to zero bytes, and the
    reply is field 1 (status) as a varint; 1 is SERVING.
    """
    check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                request_serializer=lambda _: b"",
                                response_deserializer=lambda raw: raw)
    raw = check(None, timeout=CALL_TIMEOUT_S)
    # An all-defaults reply is empty (UNKNOWN); otherwise b"\x08" then the status value.
    status = raw[1] if len(raw) >= 2 and raw[0] == 0x08 else 0
    names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
    return names.get(status, str(status))


def q(text):
    return json.dumps(text, ensure_ascii=False)


def describe(pb, e):
    """One line for an event."""
    kind = e.WhichOneof("kind")
    k = getattr(e, kind) if kind else None
    if kind == "snapshot":
        detail = "state=%s" % pb.SessionState.Name(k.state)
    elif kind in ("text_delta", "reasoning_delta"):
        detail = q(k.text)
    elif kind == "user_message":
        detail = "%s from %s" % (q(k.text), k.client_name)
    elif kind == "tool_call_started":
        detail = "%s %s" % (k.name, k.call_id)
    elif kind == "tool_call_ready":
        detail = "%s %s %s" % (k.call.name, k.call.id, k.call.arguments)
    elif kind == "tool_output":
        detail = q(k.chunk)
    elif kind == "tool_result":
        detail = "%s%s: %s" % (k.name, " (error)" if k.is_error else "", q(k.content[:200]))
    elif kind == "approval_requested":
        detail = "%s %s: %s" % (k.approval.tool, k.approval.call_id, k.approval.summary)
    elif kind == "approval_resolved":
        detail = "%s %s by %s" % (k.call_id, pb.Decision.Name(k.decision), k.client_name)
    elif kind == "turn_ended":
        detail = pb.TurnOutcome.Name(k.outcome) + (": " + k.error if k.error else "")
    elif kind == "retrying":
        detail = "attempt %d/%d in %d ms: %s" % (k.attempt, k.max_attempts, k.delay_ms, k.reason)
    elif kind == "assistant_message":
        detail = "%s (%d tool calls)" % (q(k.text), len(k.tool_calls))
    elif kind == "usage":
        detail = "prompt=%d completion=%d" % (k.prompt_tokens, k.completion_tokens)
    elif kind == "clients_changed":
        detail = " ".join(k.clients)
    elif kind == "turn_started":
        detail = q(k.prompt)
    elif kind == "error":
        detail = k.message
    else:
        detail = ""
    return ("event %d %s %s" % (e.seq, kind, detail)).rstrip()


def run(args, pb, pb_grpc, channel):
    stub = pb_grpc.AgentDaemonStub(channel)
    if args.skip_health:
        print("health: skipped")
    else:
        print("health: " + check_health(channel))

    model = pb.ModelConfig(base_url=os.environ.get("AGENT_BASE_URL", ""),
                           api_key=os.environ.get("AGENT_API_KEY",
                                                  os.environ.get("OPENAI_API_KEY", "")),
                           model=os.environ.get("AGENT_MODEL", ""),
                           provider=os.environ.get("AGENT_PROVIDER", ""))
    session = stub.CreateSession(pb.CreateSessionRequest(
        workdir=os.path.abspath(args.workdir), model=model, policy=pb.POLICY_MODE_ASK,
        title=args.prompt[:60]), timeout=CALL_TIMEOUT_S)
    print("session: %s in %s" % (session.id, session.workdir))

    # Attach before prompting, so no event of the turn is missed: the first event is the
    # snapshot, and everything after it is live.
    events = stub.Attach(pb.AttachRequest(session_id=session.id, client_name=CLIENT_NAME,
                                          protocol_version=4))
    try:
        first = next(events)
        print(describe(pb, first))
        pos = stub.SendPrompt(pb.SendPromptRequest(session_id=session.id, text=args.prompt,
                                                   client_name=CLIENT_NAME),
                              timeout=CALL_TIMEOUT_S)
        print("prompt: queued at position %d" % pos.queue_position)
        cancelled = False
        answered = set()

        def answer(approval):
            if approval.call_id in answered:
                return
            answered.add(approval.call_id)
            req = pb.ApproveRequest(session_id=session.id, call_id=approval.call_id,
                                    client_name=CLIENT_NAME)
            if args.deny:
                req.decision = pb.DECISION_DENY
                req.reason = args.deny_reason
            else:
                req.decision = pb.DECISION_ALLOW_ONCE
            try:
                stub.Approve(req, timeout=CALL_TIMEOUT_S)
                print("approval: answered %s" % pb.Decision.Name(req.decision))
            except grpc.RpcError as err:  # another client answered first
                print("approval: not taken: " + err.details())

        for e in events:
            print(describe(pb, e), flush=True)
            kind = e.WhichOneof("kind")
            if kind == "approval_requested":
                answer(e.approval_requested.approval)
            elif kind == "snapshot" and e.snapshot.state == pb.SESSION_STATE_WAITING_APPROVAL:
                # A client that fell behind gets a fresh snapshot instead of the backlog;
                # an approval it missed is in there.
                answer(e.snapshot.pending_approval)
            elif kind == "text_delta" and args.cancel_after_first_delta and not cancelled:
                cancelled = True
                r = stub.Cancel(pb.CancelRequest(session_id=session.id,
                                                 client_name=CLIENT_NAME),
                                timeout=CALL_TIMEOUT_S)
                print("cancel: sent (was running: %s)" % str(r.was_running).lower())
            elif kind == "turn_ended":
                outcome = pb.TurnOutcome.Name(e.turn_ended.outcome)[len("TURN_OUTCOME_"):]
                print("outcome: " + outcome)
                return EXIT_FOR_OUTCOME.get(outcome, 1)
        print("error: the event stream ended before the turn did", file=sys.stderr)
        return EXIT_UNUSABLE
    finally:
        events.cancel()  # detaches; the session stays in the daemon


def main():
    p = argparse.ArgumentParser(description="Runs one agent turn through agentd's gRPC API.")
    p.add_argument("prompt", help="what to ask the agent")
    p.add_argument("--socket", default=default_socket(),
                   help="agentd's Unix socket (default: $AGENT_SOCKET, as the agent CLI)")
    p.add_argument("--workdir", default=os.getcwd(), help="the project (default: cwd)")
    p.add_argument("--proto", default=DEFAULT_PROTO, help="path of agent.proto")
    p.add_argument("--deny", action="store_true",
                   help="deny gated tool calls (default: allow each once)")
    p.add_argument("--deny-reason", default="the example client was told to deny",
                   help="what the model is told when a call is denied")
    p.add_argument("--cancel-after-first-delta", action="store_true",
                   help="cancel the turn as soon as the first text arrives")
    p.add_argument("--skip-health", action="store_true", help="do not call grpc.health.v1")
    args = p.parse_args()

    if shutil.which("protoc") is None or not os.path.exists("/usr/bin/grpc_python_plugin"):
        print("error: needs protoc and /usr/bin/grpc_python_plugin "
              "(apt-get install protobuf-compiler protobuf-compiler-grpc)", file=sys.stderr)
        return EXIT_UNUSABLE
    with tempfile.TemporaryDirectory(prefix="agent-example-") as out:
        pb, pb_grpc = load_stubs(args.proto, out)
        with grpc.insecure_channel("unix:" + args.socket) as channel:
            try:
                return run(args, pb, pb_grpc, channel)
            except grpc.RpcError as err:
                print("error: %s: %s (is agentd running on %s?)"
                      % (err.code().name, err.details(), args.socket), file=sys.stderr)
                return EXIT_UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
