#!/usr/bin/env node
// One agent turn over agentd's gRPC API, from Node.js.
//
// Connects to a running agentd, checks its health, creates a session, attaches to it, sends
// a prompt, answers approval requests, and exits when the turn ends:
//
//   npm ci && AGENT_SOCKET=/path/to/agentd.sock node agent_example.js "fix the typo"
//
// agent.proto is loaded at run time with @grpc/proto-loader; nothing is generated.
// Exit code: 0 done, 1 error, 3 step limit, 130 cancelled, 2 the daemon could not be used.
'use strict';

const os = require('os');
const path = require('path');
const { parseArgs } = require('util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const DEFAULT_PROTO = path.join(__dirname, '..', '..', '..', 'proto', 'agent', 'v1', 'agent.proto');
const CLIENT_NAME = 'example-node';
const CALL_TIMEOUT_MS = 10000;
const EXIT_FOR_OUTCOME = { DONE: 0, ERROR: 1, MAX_STEPS: 3, CANCELLED: 130 };
const EXIT_UNUSABLE = 2;

// Where agentd listens: the same search as the agent CLI.
function defaultSocket() {
  if (process.env.AGENT_SOCKET) return process.env.AGENT_SOCKET;
  if (process.env.XDG_RUNTIME_DIR) {
    return path.join(process.env.XDG_RUNTIME_DIR, 'agent', 'agentd.sock');
  }
  return `/tmp/agent-${os.userInfo().uid}/agentd.sock`;
}

function deadline() {
  return { deadline: Date.now() + CALL_TIMEOUT_MS };
}

// A unary call as a promise.
function unary(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, deadline(), (err, reply) => (err ? reject(err) : resolve(reply)));
  });
}

// Asks the standard grpc.health.v1 service whether the server is SERVING. The call is made
// generically, without health.proto: a HealthCheckRequest for the whole server (service "")
// encodes to zero bytes, and the reply is field 1 (status) as a varint; 1 is SERVING.
function checkHealth(client) {
  const names = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest('/grpc.health.v1.Health/Check', () => Buffer.alloc(0),
      (raw) => raw, null, new grpc.Metadata(), deadline(), (err, raw) => {
        if (err) return reject(err);
        // An all-defaults reply is empty (UNKNOWN); otherwise 0x08 then the status value.
        const status = raw.length >= 2 && raw[0] === 0x08 ? raw[1] : 0;
        resolve(names[status] || String(status));
      });
  });
}

const q = (s) => JSON.stringify(s);

// One line for an event.
function describe(e) {
  const k = e[e.kind];
  let detail = '';
  switch (e.kind) {
    case 'snapshot': detail = `state=${k.state}`; break;
    case 'text_delta':
    case 'reasoning_delta': detail = q(k.text); break;
    case 'user_message': detail = `${q(k.text)} from ${k.client_name}`; break;
    case 'tool_call_started': detail = `${k.name} ${k.call_id}`; break;
    case 'tool_call_ready': detail = `${k.call.name} ${k.call.id} ${k.call.arguments}`; break;
    case 'tool_output': detail = q(k.chunk); break;
    case 'tool_result':
      detail = `${k.name}${k.is_error ? ' (error)' : ''}: ${q(k.content.slice(0, 200))}`;
      break;
    case 'approval_requested':
      detail = `${k.approval.tool} ${k.approval.call_id}: ${k.approval.summary}`;
      break;
    case 'approval_resolved': detail = `${k.call_id} ${k.decision} by ${k.client_name}`; break;
    case 'turn_ended': detail = k.outcome + (k.error ? `: ${k.error}` : ''); break;
    case 'retrying':
      detail = `attempt ${k.attempt}/${k.max_attempts} in ${k.delay_ms} ms: ${k.reason}`;
      break;
    case 'assistant_message': detail = `${q(k.text)} (${k.tool_calls.length} tool calls)`; break;
    case 'usage': detail = `prompt=${k.prompt_tokens} completion=${k.completion_tokens}`; break;
    case 'clients_changed': detail = k.clients.join(' '); break;
    case 'turn_started': detail = q(k.prompt); break;
    case 'error': detail = k.message; break;
    default: break;
  }
  return `event ${e.seq} ${e.kind} ${detail}`.trimEnd();
}

async function run(args, pkg, socket) {
  const client = new pkg.agent.v1.AgentDaemon(`unix:${socket}`, grpc.credentials.createInsecure());
  try {
    console.log(args['skip-health'] ? 'health: skipped' : `health: ${await checkHealth(client)}`);

    const env = process.env;
    const session = await unary(client, 'CreateSession', {
      workdir: path.resolve(args.workdir),
      model: {
        base_url: env.AGENT_BASE_URL || '',
        api_key: env.AGENT_API_KEY || env.OPENAI_API_KEY || '',
        model: env.AGENT_MODEL || '',
        provider: env.AGENT_PROVIDER || '',
      },
      policy: 'POLICY_MODE_ASK',
      title: args.prompt.slice(0, 60),
    });
    console.log(`session: ${session.id} in ${session.workdir}`);

    // Attach before prompting, so no event of the turn is missed: the first event is the
    // snapshot, and everything after it is live.
    const call = client.Attach({ session_id: session.id, client_name: CLIENT_NAME,
                                 protocol_version: 4 });
    call.on('error', () => {});  // the iterator below reports errors; this one is for cancel()
    const answered = new Set();
    const answer = async (approval) => {
      if (answered.has(approval.call_id)) return;
      answered.add(approval.call_id);
      const req = { session_id: session.id, call_id: approval.call_id, client_name: CLIENT_NAME,
                    decision: args.deny ? 'DECISION_DENY' : 'DECISION_ALLOW_ONCE',
                    reason: args.deny ? args['deny-reason'] : '' };
      try {
        await unary(client, 'Approve', req);
        console.log(`approval: answered ${req.decision}`);
      } catch (err) {  // another client answered first
        console.log(`approval: not taken: ${err.details}`);
      }
    };

    let prompted = false;
    let cancelled = false;
    try {
      for await (const e of call) {
        console.log(describe(e));
        if (!prompted) {
          prompted = true;
          const pos = await unary(client, 'SendPrompt', { session_id: session.id,
                                                          text: args.prompt,
                                                          client_name: CLIENT_NAME });
          console.log(`prompt: queued at position ${pos.queue_position}`);
        } else if (e.kind === 'approval_requested') {
          await answer(e.approval_requested.approval);
        } else if (e.kind === 'snapshot' && e.snapshot.state === 'SESSION_STATE_WAITING_APPROVAL') {
          // A client that fell behind gets a fresh snapshot instead of the backlog; an
          // approval it missed is in there.
          await answer(e.snapshot.pending_approval);
        } else if (e.kind === 'text_delta' && args['cancel-after-first-delta'] && !cancelled) {
          cancelled = true;
          const r = await unary(client, 'Cancel', { session_id: session.id,
                                                    client_name: CLIENT_NAME });
          console.log(`cancel: sent (was running: ${r.was_running})`);
        } else if (e.kind === 'turn_ended') {
          const outcome = e.turn_ended.outcome.replace(/^TURN_OUTCOME_/, '');
          console.log(`outcome: ${outcome}`);
          return EXIT_FOR_OUTCOME[outcome] ?? 1;
        }
      }
      console.error('error: the event stream ended before the turn did');
      return EXIT_UNUSABLE;
    } finally {
      call.cancel();  // detaches; the session stays in the daemon
    }
  } finally {
    client.close();
  }
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      socket: { type: 'string', default: defaultSocket() },
      workdir: { type: 'string', default: process.cwd() },
      proto: { type: 'string', default: DEFAULT_PROTO },
      deny: { type: 'boolean', default: false },
      'deny-reason': { type: 'string', default: 'the example client was told to deny' },
      'cancel-after-first-delta': { type: 'boolean', default: false },
      'skip-health': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error('usage: agent_example.js [--socket PATH] [--workdir DIR] [--proto FILE] ' +
                  '[--deny [--deny-reason TEXT]] [--cancel-after-first-delta] [--skip-health] ' +
                  'PROMPT');
    return EXIT_UNUSABLE;
  }
  const args = { ...values, prompt: positionals[0] };
  // keepCase: the proto's field names; enums as their names; oneofs: `kind` names the event.
  const definition = protoLoader.loadSync(path.resolve(args.proto), {
    keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition);
  try {
    return await run(args, pkg, args.socket);
  } catch (err) {
    if (err.code === undefined) throw err;
    console.error(`error: ${grpc.status[err.code]}: ${err.details} ` +
                  `(is agentd running on ${args.socket}?)`);
    return EXIT_UNUSABLE;
  }
}

main().then((code) => { process.exitCode = code; });
