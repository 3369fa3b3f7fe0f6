// The server side of the `http` benchmark (http-worker.mjs): a checkout's BUILT Fetch handler
// (services/http) bound to its Node listener (services/host/listen.ts) exactly as `serve` binds
// it — a tokenless loopback listener that serves only its own user — with stub handlers for the
// two requests a client makes per Turn: `submitPrompt` answers a receipt, `watchTurn` streams a
// one-step Turn's events as a live Turn sends them (a snapshot at once, then the text deltas,
// then the settle's snapshot, usage and turn.finished, each group a turn of the event loop
// later), through the same Channel the event streams use. No storage, no model: what the
// process spends is the HTTP edge's own cost.
//
//   node tools/bench/http-server.mjs ROOT   (ROOT: a built checkout; prints its URL on stdout)
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
if (!root) {
  console.error("usage: node tools/bench/http-server.mjs ROOT");
  process.exit(2);
}
const load = (path) => import(pathToFileURL(join(root, "dist", path)).href);
const { createFetchHandler } = await load("services/http/handler.js");
const { LOOPBACK_HOSTS } = await load("services/http/guard.js");
const { listen } = await load("services/host/listen.js");
const { Channel } = await load("services/core/events/channel.js");

const policy = {
  version: 4,
  permissions: [],
  permissionMatching: { caseSensitive: true },
  approval: { timeoutMs: { kind: "unlimited", origin: "absent" } },
  timeouts: { turnMs: { kind: "unlimited", origin: "absent" } },
  steering: { maxBatches: { kind: "unlimited", origin: "absent" } },
  subagents: { maxDepth: { kind: "finite", value: 1, origin: "platform" } },
  provider: { maxAttempts: { kind: "finite", value: 3, origin: "platform" }, attemptTimeoutMs: { kind: "unlimited", origin: "absent" }, elapsedMs: { kind: "unlimited", origin: "absent" }, pacing: { kind: "none" } },
  context: { safetyReserve: { units: 1024, origin: "platform" } },
  images: { maxBase64Bytes: { kind: "unlimited", origin: "absent" } },
};
const ANSWER = "Hello! This is the scripted answer from the bench model.";

/** A one-step Turn's events as a live watch sends them, in the groups a Turn commits them. */
function turnEvents(sessionId, turnId) {
  const now = Date.now();
  const base = { id: turnId, sessionId, sequence: 1, request: { sessionId, turnId, prompt: [{ type: "text", text: "hello" }], agent: "build" }, model: "test/scripted", modelLeaseId: "lease_0c90b698cba2417891ce52bf957f9348", requestOptionsId: randomUUID(), policy, acceptedAt: now, attribution: { clientId: "ze-bench" }, startedAt: now };
  const running = { ...base, steering: { gate: "open", promotedBatchCount: 0, steers: [] }, phase: "running", revision: 2, parts: [] };
  const partId = randomUUID();
  const usage = { promptTokens: 2598, completionTokens: 14, totalTokens: 2612 };
  const contextUse = { model: "test/scripted", usedUnits: 2612, contextUnits: 200000 };
  const outcome = { kind: "completed", turnId, text: ANSWER };
  const completed = { ...base, steering: { gate: "closed", promotedBatchCount: 0, steers: [] }, phase: "completed", revision: 5, parts: [{ type: "text", id: partId, assistantMessageIndex: 0, text: ANSWER }], usage, contextUse, outcome, completedAt: now };
  const message = (revision, data) => ({ event: data.type, id: String(revision), data: { ...data, revision } });
  let offset = 0;
  const deltas = ANSWER.split(/(?<= )/).map((delta) => {
    const event = message(2, { type: "turn.text.delta", partId, assistantMessageIndex: 0, offset, delta });
    offset += delta.length;
    return event;
  });
  return [
    [message(2, { type: "turn.snapshot", turn: running })],
    deltas,
    [message(3, { type: "turn.snapshot", turn: completed }), message(4, { type: "turn.usage", usage, contextUse }), message(5, { type: "turn.finished", outcome, completedAt: now })],
  ];
}

const handlers = {
  submitPrompt: async ({ path, headers, body }) => ({
    status: 202,
    body: {
      receipt: { delivery: body.delivery, sessionId: path.sessionId, turnId: body.turnId, modelLeaseId: "lease_0c90b698cba2417891ce52bf957f9348", requestOptionsId: randomUUID(), sequence: 1, acceptedAt: Date.now(), attribution: { clientId: headers["x-ze-harness-client-id"] } },
    },
  }),
  watchTurn: async ({ path }) => {
    const channel = new Channel();
    const groups = turnEvents(path.sessionId, path.turnId);
    const pushNext = () => {
      const group = groups.shift();
      if (channel.isClosed) return;
      for (const event of group) channel.push(event);
      // The last group ends the stream as an event stream's pump does: closed once the pump's
      // promise settles, a few microtasks after turn.finished was pushed.
      if (groups.length === 0) void Promise.resolve().then(() => channel.close());
      else setImmediate(pushNext);
    };
    pushNext();
    return { status: 200, stream: channel };
  },
};

const fetch = createFetchHandler({ handlers, release: "0.0.0-bench", guard: { allowedHosts: LOOPBACK_HOSTS }, servers: (name) => name === "local", openapi: () => "{}" });
let connections = 0;
const listener = await listen(fetch, { port: 0, hostname: "127.0.0.1", ownUserOnly: true, onConnection: () => (connections += 1) });
process.stdout.write(`${listener.url}\n`);
// The connections the client opened, so the worker can tell them per pair (kept-alive: few).
process.once("SIGTERM", () => {
  process.stderr.write(`connections=${connections}\n`);
  void listener.close().then(() => process.exit(0));
});
