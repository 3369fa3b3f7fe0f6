// The fuzz loop: seed real resources, then send N requests one at a time (so a failure replays
// from its seed and index), check each answer against the contract, and harvest identifiers
// from successful answers so later requests reach real Sessions, Turns and terminals. The
// transport is the caller's: tests/fuzz sends in-process to a harness, tools/fuzz/main.ts over
// TCP to a `serve` process.
import { loadContract, type Contract } from "./document.js";
import { createChecker, type FuzzResponse } from "./check.js";
import { Random } from "./random.js";
import { fuzzRequest, sessionPool, type FuzzRequest } from "./requests.js";
import type { Pools } from "./values.js";

export type { FuzzRequest } from "./requests.js";
export type { FuzzResponse } from "./check.js";

/** Thrown by a transport for a request it cannot put on its wire at all (e.g. a header byte fetch refuses). */
export class UnsendableRequest extends Error {}

export type Send = (request: FuzzRequest) => Promise<FuzzResponse>;

export interface FuzzOptions {
  readonly send: Send;
  readonly seed: string;
  readonly requests: number;
  /** The server's bearer token: sent with every request but those of the `auth` mutation. */
  readonly token?: string;
  /** Run only these request indexes (after seeding), e.g. to replay a failure. */
  readonly only?: readonly number[];
  /** An answer slower than this is a failure (a hang), not a wait. Default 30 s. */
  readonly timeoutMs?: number;
  readonly contract?: Contract;
  readonly onProgress?: (done: number, failures: number) => void;
}

export interface FuzzFailure {
  readonly seed: string;
  readonly request: FuzzRequest;
  readonly problem: string;
  readonly response?: FuzzResponse;
}

export interface FuzzReport {
  readonly requests: number;
  readonly unsendable: number;
  readonly failures: readonly FuzzFailure[];
  /** Answers by status. */
  readonly statuses: Readonly<Record<number, number>>;
  /** Operations (by id) that answered 2xx at least once. */
  readonly succeeded: ReadonlySet<string>;
  readonly elapsedMs: number;
}

const CLIENT_ID = "x-ze-harness-client-id";
const POOL_CAP = 16;
const RESEED_EVERY = 25;
/** Identifiers worth reusing, by the name path parameters and body fields give them. */
const HARVESTED = new Set([
  "sessionId",
  "turnId",
  "terminalId",
  "compactionId",
  "permissionRequestId",
  "questionRequestId",
  "savedPermissionId",
  "requestId",
  "connectionId",
  "loginId",
  "forkedSessionId",
  "entryId",
  "steerId",
]);
const PARENT_ID: Readonly<Record<string, string>> = {
  session: "sessionId",
  turn: "turnId",
  terminal: "terminalId",
  compaction: "compactionId",
  connection: "connectionId",
  login: "loginId",
  savedPermission: "savedPermissionId",
};

function remember(pools: Pools, name: string, value: string, front = false): void {
  const pool = pools.get(name) ?? [];
  if (pool.includes(value)) return;
  if (front) pool.unshift(value);
  else pool.push(value);
  if (pool.length > POOL_CAP) pool.splice(front ? POOL_CAP : 0, pool.length - POOL_CAP);
  pools.set(name, pool);
}

/**
 * Identifiers in a successful JSON answer: `…Id` fields and the `id` of a `session`/`turn`/…
 * object; those of an answer about one Session also go to that Session's own pools.
 */
function harvest(pools: Pools, text: string | undefined, sessionId?: string): void {
  if (text === undefined || text.length > 256 * 1024) return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return;
  }
  const pending: [unknown, string][] = [[value, ""]];
  for (let visited = 0; pending.length > 0 && visited < 2000; visited++) {
    const [next, parent] = pending.pop()!;
    if (next === null || typeof next !== "object") continue;
    for (const [key, inner] of Object.entries(next)) {
      if (typeof inner === "string") {
        const name = HARVESTED.has(key) ? key : key === "id" ? PARENT_ID[parent] : undefined;
        if (name === undefined) continue;
        remember(pools, name, inner);
        if (sessionId !== undefined && name !== "sessionId") remember(pools, sessionPool(name, sessionId), inner);
      } else pending.push([inner, Array.isArray(next) ? parent : key]);
    }
  }
}

/** The pool a 404 is about, by its `resource` or the noun its message starts with. */
const GONE_POOL: readonly (readonly [RegExp, string])[] = [
  [/^session\b/i, "sessionId"],
  [/^turn\b/i, "turnId"],
  [/^terminal\b/i, "terminalId"],
  [/^(context_compaction|context compaction)\b/i, "compactionId"],
];

/** A 404 about a pooled id (`Session <id> does not exist`) means it is gone: stop offering that id. */
function forget(pools: Pools, text: string | undefined): void {
  let body: { resource?: unknown; message?: unknown };
  try {
    body = JSON.parse(text ?? "") as typeof body;
  } catch {
    return;
  }
  const message = typeof body.message === "string" ? body.message : "";
  const subject = typeof body.resource === "string" ? body.resource : message;
  const name = GONE_POOL.find(([pattern]) => pattern.test(subject))?.[1];
  const id = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(message)?.[0];
  const pool = name === undefined ? undefined : pools.get(name);
  if (pool && id !== undefined) pools.set(name!, pool.filter((value) => value.toLowerCase() !== id.toLowerCase()));
}

const json = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

/** A Session with a Turn and a terminal, made through the API itself; their ids go first in the pools. */
async function seedResources(send: Send, pools: Pools, random: Random, token: string | undefined): Promise<string> {
  const sessionId = random.uuid();
  const request = (method: string, target: string, body?: unknown): FuzzRequest => ({
    index: -1,
    operationId: "seed",
    mutation: "seed",
    method,
    target,
    headers: [["content-type", "application/json"], [CLIENT_ID, "fuzz-seed"], ...(token === undefined ? [] : ([["authorization", `Bearer ${token}`]] as [string, string][]))],
    ...(body !== undefined ? { body: json(body) } : {}),
  });
  const session = `/v1/servers/local/sessions/${sessionId}`;
  const created = await send(request("PUT", session, { systemPrompt: "fuzz seed" }));
  if (created.status !== 200) throw new Error(`seeding: createSession answered ${created.status}: ${created.text}`);
  remember(pools, "sessionId", sessionId, true);
  const turnId = random.uuid();
  const prompt = await send(request("POST", `${session}/prompts`, { delivery: "queue", turnId, prompt: [{ type: "text", text: "seed" }] }));
  if (prompt.status === 202) {
    remember(pools, "turnId", turnId, true);
    remember(pools, sessionPool("turnId", sessionId), turnId, true);
  }
  const terminalId = random.uuid();
  const terminal = await send(request("PUT", `${session}/terminals/${terminalId}`, { command: ["cat"] }));
  if (terminal.status === 200) {
    remember(pools, "terminalId", terminalId, true);
    remember(pools, sessionPool("terminalId", sessionId), terminalId, true);
  }
  return sessionId;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const contract = options.contract ?? loadContract();
  const check = createChecker(contract);
  // The scripted test model's provider is the one provider that exists (and the only one that may be called).
  // An MCP server named `everything` (the real one in tests/fuzz) is looked for too.
  const pools: Pools = new Map([
    ["providerId", ["test"]],
    ["serverName", ["everything"]],
    ["promptName", ["simple-prompt", "args-prompt", "resource-prompt"]],
  ]);
  const started = Date.now();
  let seedSession = await seedResources(options.send, pools, new Random(`${options.seed}#seed`), options.token);
  const failures: FuzzFailure[] = [];
  const statuses: Record<number, number> = {};
  const succeeded = new Set<string>();
  let unsendable = 0;
  const indexes = options.only ?? Array.from({ length: options.requests }, (_, index) => index);
  const timeoutMs = options.timeoutMs ?? 30_000;

  for (const [done, index] of indexes.entries()) {
    // A fuzzed deleteSession or deleteServer may have removed the seed: make another.
    if (done > 0 && done % RESEED_EVERY === 0) {
      const headers: [string, string][] = options.token === undefined ? [] : [["authorization", `Bearer ${options.token}`]];
      const probe = await options.send({ index: -1, operationId: "seed", mutation: "seed", method: "GET", target: `/v1/servers/local/sessions/${seedSession}`, headers });
      if (probe.status !== 200) seedSession = await seedResources(options.send, pools, new Random(`${options.seed}#seed${index}`), options.token);
    }
    const random = Random.forRequest(options.seed, index);
    const request = fuzzRequest(index, contract, { random, contract, pools }, options.token);
    let response: FuzzResponse;
    let timer: NodeJS.Timeout | undefined;
    try {
      response = await Promise.race([
        options.send(request),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      if (error instanceof UnsendableRequest) {
        unsendable += 1;
        continue;
      }
      failures.push({ seed: options.seed, request, problem: `the request failed: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    } finally {
      clearTimeout(timer);
    }
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    const problem = check(request.method, request.target, response);
    if (problem !== undefined) failures.push({ seed: options.seed, request, problem, response });
    else if (response.status === 404) forget(pools, response.text);
    else if (response.status >= 200 && response.status < 300) {
      succeeded.add(request.operationId);
      harvest(pools, response.text, contract.match(request.method, new URL(`http://localhost${request.target}`).pathname)?.params["sessionId"]);
    }
    options.onProgress?.(done + 1, failures.length);
  }
  return { requests: indexes.length, unsendable, failures, statuses, succeeded, elapsedMs: Date.now() - started };
}

const shorten = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`);

/** A failure as a reproducible report: seed, index, the request as sent, what was wrong. */
export function formatFailure(failure: FuzzFailure): string {
  const { request } = failure;
  const lines = [
    `seed=${failure.seed} index=${request.index} operation=${request.operationId} mutation=${request.mutation}`,
    `  ${request.method} ${shorten(request.target, 300)}`,
    ...request.headers.map(([name, value]) => `  ${name}: ${shorten(value, 120)}`),
  ];
  if (request.body !== undefined) {
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(request.body);
    } catch {
      text = `base64:${Buffer.from(request.body).toString("base64")}`;
    }
    lines.push(`  body (${request.body.byteLength} bytes): ${shorten(text, 600)}`);
  }
  lines.push(`  → ${failure.problem}`);
  lines.push(`  replay: npm run fuzz -- --seed ${failure.seed} --only ${request.index}`);
  return lines.join("\n");
}
