// The measuring process of the `turns` benchmark (spawned by turns.mjs as
// `node --import tsx tools/bench/turns-worker.mjs '<options json>'`; tsx only for the test model).
//
// Three processes take part, as in real use:
// - this one: the scripted test model (in process, zero latency) and the client;
// - a warm `ze-harness serve` (the BUILT binary, file database in a temp dir) that this process
//   spawns, configured through a temp XDG home to use the test model;
// so the harness process does harness work only, and the test model's write times and the
// client's receive times are read from one clock (performance.now() of this process).
//
// Measured, per Turn: prompt → finished answer (the submit POST starts the clock; the client
// then opens the Turn's watch stream and stops at `turn.finished`), and the model time it
// contains: the same request body the harness sends, streamed straight through the `openai`
// SDK against the same test model, in the same process and run (the baseline). SSE delta
// latency: a scripted answer of many one-word text deltas with small `delay` gaps; each word
// carries a unique marker, stamped when the test model writes its chunk (a wrapper around
// ServerResponse.prototype.write on the model's own responses) and when the client receives
// the `turn.text.delta` that contains it. The model holds such an answer back until the client's
// watch of that Turn is open (live deltas are not replayed), so no word is sent to nobody. The
// baseline for that: the same markers received straight through the `openai` SDK stream.
//
// Prints one JSON line on stdout with the raw samples (ms); progress goes to stderr.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { binPath, tempHome, writeTestModelConfig } from "./lib.mjs";

const options = {
  flushMs: undefined, // contentFlushMillis; undefined = the default
  warmupTurns: 10,
  sequentialTurns: 50,
  concurrentSessions: 20,
  turnsPerSession: 5,
  deltaWords: 40,
  deltaGapMs: 5,
  deltaLeadMs: 5,
  sequentialDeltaTurns: 8,
  concurrentDeltaTurns: 2,
  serveNodeArgs: [],
  rssTurns: 1000,
  ...JSON.parse(process.argv[2] ?? "{}"),
};

const SERVER = "local";
const MARKER = /q\d+w\d+/g;
const ANSWER = "Hello! This is the scripted answer from the bench model.";

// ---------------------------------------------------------------------------------------------
// Write times of the test model's chunks: only responses to …/chat/completions (the harness's own
// SSE responses, served by another process anyway, are not the model's).

const written = new Map();
const originalWrite = http.ServerResponse.prototype.write;
http.ServerResponse.prototype.write = function write(chunk, ...rest) {
  if (typeof chunk === "string" && this.req?.url?.endsWith("/chat/completions")) {
    const now = performance.now();
    for (const [marker] of chunk.matchAll(MARKER)) if (!written.has(marker)) written.set(marker, now);
  }
  return originalWrite.call(this, chunk, ...rest);
};

const { startTestModel } = await import("../test-model/index.ts");
const { createZeClient, sdk, unwrap } = await import("../../dist/clients/index.js");

const log = (line) => process.stderr.write(`turns-worker: ${line}\n`);

/** The text of the last user message of a chat request body. */
function lastUserText(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    if (Array.isArray(message.content)) return message.content.map((part) => part.text ?? "").join("");
    return "";
  }
  return "";
}

/** A copy of a chat request body with its last user message's text replaced. */
function withLastUserText(body, text) {
  const copy = structuredClone(body);
  for (let index = copy.messages.length - 1; index >= 0; index--) {
    if (copy.messages[index].role !== "user") continue;
    copy.messages[index].content = text;
    return copy;
  }
  throw new Error("no user message in the captured request body");
}

function deltaAnswer(seq) {
  const events = [{ type: "delay", ms: options.deltaLeadMs }];
  for (let word = 0; word < options.deltaWords; word++) {
    events.push({ type: "text", text: `q${seq}w${word} ` });
    if (word < options.deltaWords - 1) events.push({ type: "delay", ms: options.deltaGapMs });
  }
  return { events };
}

// A delta Turn's answer waits until the client watches that Turn (under load the watch can open
// late); a seq nobody waits for (the direct baseline) is answered at once.
const watching = new Map();
const watched = (seq) => {
  let resolveWatch;
  const promise = new Promise((resolvePromise) => (resolveWatch = resolvePromise));
  watching.set(seq, promise);
  return () => resolveWatch();
};

const model = await startTestModel();
model.reply(async (request) => {
  const match = /^bench-delta (\d+)$/.exec(lastUserText(request.body).trim());
  if (!match) return { events: [{ type: "text", text: ANSWER }] };
  const seq = Number(match[1]);
  await watching.get(seq);
  return deltaAnswer(seq);
});

// ---------------------------------------------------------------------------------------------
// The harness: the built `serve`, configured for the test model.

const home = tempHome("ze-bench-turns-");
writeTestModelConfig(home, model.openaiBaseURL, options.flushMs !== undefined ? { contentFlushMillis: options.flushMs } : {});

const serve = spawn(process.execPath, [...options.serveNodeArgs, binPath, "serve", "--port", "0", "--database", join(home.dir, "bench.db")], {
  cwd: home.root,
  env: home.env,
  stdio: ["ignore", "pipe", "pipe"],
});
let serveStderr = "";
serve.stderr.setEncoding("utf8").on("data", (chunk) => (serveStderr = (serveStderr + chunk).slice(-4000)));
const serveExited = new Promise((resolvePromise) => serve.once("exit", (code, signal) => resolvePromise(code ?? signal)));
// Stopped early (the parent's timeout): take the server down too.
process.once("SIGTERM", () => {
  serve.kill("SIGTERM");
  serve.once("exit", () => {
    home.cleanup();
    process.exit(1);
  });
});
const url = await new Promise((resolvePromise, reject) => {
  createInterface({ input: serve.stdout }).once("line", resolvePromise);
  serve.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${serveStderr.trim()}`)));
});

const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
const openai = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "bench", maxRetries: 0 });

async function createSession() {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

const received = new Map();
const stampDeltas = (text, now) => {
  for (const [marker] of text.matchAll(MARKER)) if (!received.has(marker)) received.set(marker, now);
};

/** One Turn through the harness: submit, then watch to `turn.finished`. */
async function harnessTurn(sessionId, text, onWatching = () => {}) {
  const turnId = randomUUID();
  const started = performance.now();
  await unwrap(
    sdk.submitPrompt({
      client: api.client,
      path: { server: SERVER, sessionId },
      headers: { "x-ze-harness-client-id": api.clientId },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] },
    }),
  );
  const submitted = performance.now();
  const controller = new AbortController();
  const { stream } = await sdk.watchTurn({ client: api.client, path: { server: SERVER, sessionId, turnId }, sseMaxRetryAttempts: 0, signal: controller.signal });
  let outcome;
  try {
    for await (const event of stream) {
      onWatching();
      if (event.type === "turn.text.delta") stampDeltas(event.delta, performance.now());
      else if (event.type === "turn.finished") {
        outcome = event.outcome;
        break;
      }
    }
  } finally {
    controller.abort();
  }
  const finished = performance.now();
  if (outcome?.kind !== "completed") throw new Error(`Turn ${turnId} ended ${JSON.stringify(outcome ?? "without turn.finished")}`);
  return { total: finished - started, submit: submitted - started };
}

/**
 * The same Turn through a plain HTTP client (node:http, one kept-alive connection, no SDK, no
 * response validation): what the server itself adds, apart from the generated client's own work
 * in this process (its request building, zod checks of each answer and SSE event, web streams).
 */
const plainAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
function plainRequest(method, path, body) {
  return new Promise((resolvePromise, reject) => {
    const request = http.request(new URL(path, url), { method, agent: plainAgent, headers: body === undefined ? {} : { "content-type": "application/json", "x-ze-harness-client-id": api.clientId } }, (response) => {
      response.setEncoding("utf8");
      let text = "";
      // Read to the end: the watch ends after turn.finished, and a response read to its end leaves
      // the connection kept alive for the next request (a destroyed one would cost a new connection).
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolvePromise({ status: response.statusCode, text }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
async function plainTurn(sessionId, text) {
  const turnId = randomUUID();
  const base = `/v1/servers/${SERVER}/sessions/${sessionId}`;
  const started = performance.now();
  const submitted = await plainRequest("POST", `${base}/prompts`, { delivery: "queue", turnId, prompt: [{ type: "text", text }] });
  if (submitted.status !== 202 && submitted.status !== 200) throw new Error(`plain submit answered ${submitted.status}: ${submitted.text}`);
  const afterSubmit = performance.now();
  const watched = await plainRequest("GET", `${base}/turns/${turnId}/events`);
  if (!watched.text.includes("turn.finished")) throw new Error(`plain watch ended without turn.finished: ${watched.text.slice(-300)}`);
  return { total: performance.now() - started, submit: afterSubmit - started };
}

/** The model alone: one streamed chat completion straight through the openai SDK. */
async function directStream(body) {
  const started = performance.now();
  const stream = await openai.chat.completions.create({ ...body, stream: true });
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta?.content;
    if (content) stampDeltas(content, performance.now());
  }
  return performance.now() - started;
}

const latencies = (seqs) => {
  const values = [];
  let missing = 0;
  for (const seq of seqs) {
    for (let word = 0; word < options.deltaWords; word++) {
      const marker = `q${seq}w${word}`;
      const sentAt = written.get(marker);
      const gotAt = received.get(marker);
      if (sentAt === undefined || gotAt === undefined) missing += 1;
      else values.push(gotAt - sentAt);
    }
  }
  return { values, missing };
};

let nextSeq = 0;

/** A Turn with the many-deltas answer; returns its seq. */
async function deltaTurn(sessionId) {
  const seq = nextSeq++;
  await harnessTurn(sessionId, `bench-delta ${seq}`, watched(seq));
  return seq;
}
const result = { flushMs: options.flushMs ?? null, sessions: options.concurrentSessions };
try {
  // Warm-up: the server's first Turns (JIT, prepared statements, the model connection), and the
  // request body the harness sends for a plain prompt (the baseline replays it).
  const warmSession = await createSession();
  for (let index = 0; index < options.warmupTurns; index++) await harnessTurn(warmSession, "hello");
  await deltaTurn(warmSession);
  const plainBody = [...model.requests].reverse().find((request) => lastUserText(request.body) === "hello")?.body;
  if (!plainBody) throw new Error("the harness sent no model request for the plain prompt");
  for (let index = 0; index < options.warmupTurns; index++) await directStream(plainBody);

  // 1 Session, Turns one after another; the baseline interleaved, so drift hits both alike.
  log("1 Session");
  const sequential = { model: [], turn: [], submit: [], plainTurn: [], plainSubmit: [] };
  const session = await createSession();
  for (let index = 0; index < 5; index++) await plainTurn(session, "hello");
  for (let index = 0; index < options.sequentialTurns; index++) {
    sequential.model.push(await directStream(plainBody));
    const { total, submit } = await harnessTurn(session, "hello");
    sequential.turn.push(total);
    sequential.submit.push(submit);
    const plain = await plainTurn(session, "hello");
    sequential.plainTurn.push(plain.total);
    sequential.plainSubmit.push(plain.submit);
  }
  result.sequential = sequential;

  // 20 Sessions at once, each a few Turns in sequence; the baseline: as many direct streams at once.
  log(`${options.concurrentSessions} Sessions`);
  const concurrent = { model: [], turn: [], submit: [] };
  const sessions = await Promise.all(Array.from({ length: options.concurrentSessions }, () => createSession()));
  for (let round = 0; round < options.turnsPerSession; round++) {
    concurrent.model.push(...(await Promise.all(sessions.map(() => directStream(plainBody)))));
    const turns = await Promise.all(sessions.map((sessionId) => harnessTurn(sessionId, "hello")));
    concurrent.turn.push(...turns.map((turn) => turn.total));
    concurrent.submit.push(...turns.map((turn) => turn.submit));
  }
  result.concurrent = concurrent;

  // SSE delta latency: model write → client receive, through the harness and straight.
  log("delta latency");
  const deltaBody = (seq) => withLastUserText(plainBody, `bench-delta ${seq}`);
  const deltas = { sequential: {}, concurrent: {} };
  {
    const direct = [];
    const harness = [];
    for (let index = 0; index < options.sequentialDeltaTurns; index++) {
      const directSeq = nextSeq++;
      direct.push(directSeq);
      await directStream(deltaBody(directSeq));
      harness.push(await deltaTurn(session));
    }
    deltas.sequential = { model: latencies(direct), harness: latencies(harness) };
  }
  {
    const direct = [];
    const harness = [];
    for (let round = 0; round < options.concurrentDeltaTurns; round++) {
      const directSeqs = sessions.map(() => nextSeq++);
      direct.push(...directSeqs);
      await Promise.all(directSeqs.map((seq) => directStream(deltaBody(seq))));
      harness.push(...(await Promise.all(sessions.map((sessionId) => deltaTurn(sessionId)))));
    }
    deltas.concurrent = { model: latencies(direct), harness: latencies(harness) };
  }
  result.deltas = deltas;
  result.deltaScript = { words: options.deltaWords, gapMs: options.deltaGapMs };

  // Memory over many Turns: the serve's resident set sampled every 250 Turns of 1,000 (a new
  // Session every 50 Turns, as users start new conversations). A garbage collection of the serve
  // is not possible from outside, so each sample is the resident set as the kernel reports it.
  if (options.rssTurns > 0) {
    log(`RSS over ${options.rssTurns} Turns`);
    const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${serve.pid}/status`, "utf8"))?.[1] ?? NaN);
    const samples = [{ turns: 0, kib: rssOf() }];
    let rssSession = await createSession();
    for (let index = 1; index <= options.rssTurns; index++) {
      if (index % 50 === 0) rssSession = await createSession();
      await harnessTurn(rssSession, "hello");
      if (index % 250 === 0) samples.push({ turns: index, kib: rssOf() });
    }
    result.rss = samples;
  }
} catch (error) {
  result.error = error instanceof Error ? error.message : String(error);
  if (serveStderr.trim()) result.error += ` (serve stderr: ${serveStderr.trim()})`;
} finally {
  if (serve.exitCode === null) serve.kill("SIGTERM");
  await serveExited;
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
