// An editor for the tests, built on the official ACP SDK: it starts `agent acp` (argv[2] is
// the agent binary; the rest are its arguments) and is driven by test_acp.py through its own
// stdin, one JSON command per line; it reports what the agent sent on its stdout, one JSON
// object per line. The SDK validates every message against the ACP schema: an invalid one
// is reported as {"type":"sdk_error"}.
//
// Commands:
//   {"op":"request","tag":T,"method":M,"params":P}  -> {"type":"response","tag":T,"result"|"error"}
//   {"op":"notify","method":M,"params":P}
//   {"op":"permissions","answer":"allow_once"|"allow_always"|"reject_once"|"hold"}
//        how later permission requests are answered; "hold" leaves them open until the
//        agent withdraws them ({"type":"permission_withdrawn"}) or {"op":"answer"} comes
//   {"op":"answer","optionId":O}                     answers the oldest held request
//   {"op":"buffer","path":P,"text":X}               an unsaved editor buffer for fs reads
//   {"op":"close"}                                   closes the agent's stdin, waits for exit
// Reports: {"type":"update","sessionId","update"}, {"type":"permission","params"},
//   {"type":"fs_read","params"}, {"type":"exit","code"}.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [agentBin, ...agentArgs] = process.argv.slice(2);
const child = spawn(agentBin, agentArgs, { stdio: ["pipe", "pipe", "inherit"] });
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const originalError = console.error;
console.error = (...args) => {
  out({ type: "sdk_error", text: args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ") });
  originalError(...args);
};

let answerMode = "allow_once";
const held = [];  // {resolve, signal}
const buffers = new Map();

const app = acp.client()
  .onNotification("session/update", ({ params }) => {
    out({ type: "update", sessionId: params.sessionId, update: params.update });
  })
  .onRequest("session/request_permission", ({ params, signal }) => {
    out({ type: "permission", params });
    if (answerMode !== "hold") {
      return { outcome: { outcome: "selected", optionId: answerMode } };
    }
    return new Promise((resolve, reject) => {
      const entry = { resolve };
      held.push(entry);
      signal.addEventListener("abort", () => {
        const i = held.indexOf(entry);
        if (i >= 0) held.splice(i, 1);
        out({ type: "permission_withdrawn", toolCallId: params.toolCall.toolCallId });
        reject(signal.reason ?? new Error("withdrawn"));
      });
    });
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    out({ type: "fs_read", params });
    if (!buffers.has(params.path)) throw acp.RequestError.invalidParams(undefined, "no buffer " + params.path);
    return { content: buffers.get(params.path) };
  });

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const connection = app.connect(stream);
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));

const commands = createInterface({ input: process.stdin });
commands.on("line", async (line) => {
  const cmd = JSON.parse(line);
  if (cmd.op === "request") {
    try {
      const result = await connection.agent.request(cmd.method, cmd.params);
      out({ type: "response", tag: cmd.tag, result });
    } catch (e) {
      out({ type: "response", tag: cmd.tag, error: { code: e.code, message: e.message, data: e.data } });
    }
  } else if (cmd.op === "notify") {
    await connection.agent.notify(cmd.method, cmd.params);
  } else if (cmd.op === "permissions") {
    answerMode = cmd.answer;
  } else if (cmd.op === "answer") {
    const h = held.shift();
    if (h) h.resolve({ outcome: { outcome: "selected", optionId: cmd.optionId } });
  } else if (cmd.op === "buffer") {
    buffers.set(cmd.path, cmd.text);
  } else if (cmd.op === "close") {
    child.stdin.end();
    out({ type: "exit", code: await exited });
    process.exit(0);
  }
});
commands.on("close", () => child.kill());
