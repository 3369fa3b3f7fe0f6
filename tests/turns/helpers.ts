// Shared pieces of the Turn suites: a raw SSE reader (every event checked against the contract),
// typed API shortcuts over a ModelHarness or a `serve` process, and a gate for holding a scripted model answer until
// the test releases it (synchronisation on events, never on sleeps).
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { sdk, type PromptReceipt, type Session, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type RecordedRequest, type ScriptedResponse, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { checkSseEvent } from "../support/contract.js";
import { networkClient, networkFetch, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

export const server = "local";
export const CLIENT = "test-client";

type Fetch = (request: Request) => Promise<Response>;

/** What the API shortcuts need: the generated client and a raw (contract-checked) fetch. A ModelHarness is one; so is a `serve` process. */
export interface Api {
  readonly api: ZeClient;
  readonly fetch: Fetch;
}

/** A promise with its resolver, for holding a scripted model answer. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Answers every model request the queue does not cover with `respond(request)`, but only after
 * the test releases it: `held(n)` resolves when the n-th held request arrives, `release(n)`
 * lets it answer.
 */
export function holdReplies(h: { readonly model: TestModel }, respond: (request: RecordedRequest, index: number) => ScriptedResponse) {
  const gates: Deferred<void>[] = [];
  const arrivals: Deferred<RecordedRequest>[] = [];
  const gate = (index: number): Deferred<void> => (gates[index] ??= deferred());
  const arrival = (index: number): Deferred<RecordedRequest> => (arrivals[index] ??= deferred());
  let count = 0;
  h.model.reply(async (request) => {
    const index = ++count;
    arrival(index).resolve(request);
    await gate(index).promise;
    return respond(request, index);
  });
  return {
    held: (index: number): Promise<RecordedRequest> => arrival(index).promise,
    release: (index: number): void => gate(index).resolve(),
  };
}

// -------------------------------------------------------------------------------------------
// SSE

export interface SseMessage<T = Record<string, unknown>> {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: T;
}

/** A raw SSE reader over a fetch Response; validates every event's data against the contract. */
export class SseReader<T extends { type: string } = { type: string } & Record<string, unknown>> {
  readonly messages: SseMessage<T>[] = [];
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private ended = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly pathname: string,
    private readonly controller: AbortController,
  ) {}

  get done(): boolean {
    return this.ended;
  }

  /** The next message, or undefined when the stream ended. */
  async next(): Promise<SseMessage<T> | undefined> {
    for (;;) {
      const boundary = this.buffer.indexOf("\n\n");
      if (boundary >= 0) {
        const block = this.buffer.slice(0, boundary);
        this.buffer = this.buffer.slice(boundary + 2);
        const parsed = this.parse(block);
        if (parsed) return parsed;
        continue;
      }
      if (this.ended) return undefined;
      const chunk = await this.reader.read();
      if (chunk.done) {
        this.ended = true;
        this.buffer += this.decoder.decode();
        continue;
      }
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  private parse(block: string): SseMessage<T> | undefined {
    let event: string | undefined;
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0) return undefined;
    const payload = JSON.parse(data.join("\n")) as T;
    checkSseEvent("GET", this.pathname, payload);
    // The wire rules of spec/events.tsp: `event:` is the payload's type.
    expect(event).toBe(payload.type);
    const message = { event: event!, id, data: payload };
    this.messages.push(message);
    return message;
  }

  /** Reads until `predicate` holds for a message and returns it (fails if the stream ends first). */
  async until(predicate: (data: T) => boolean, what = "the expected event"): Promise<T> {
    for (;;) {
      const message = await this.next();
      if (!message) throw new Error(`the stream ended before ${what}; saw ${this.messages.map((m) => m.data.type).join(", ")}`);
      if (predicate(message.data)) return message.data;
    }
  }

  /** Reads every remaining message until the stream ends. */
  async rest(): Promise<T[]> {
    const out: T[] = [];
    for (let message = await this.next(); message; message = await this.next()) out.push(message.data);
    return out;
  }

  close(): void {
    this.controller.abort();
    void this.reader.cancel().catch(() => undefined);
  }
}

/** Opens an SSE GET at `path` (absolute path + query) on `base`. */
export async function openSse<T extends { type: string }>(
  fetch: Fetch,
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseReader<T>> {
  const controller = new AbortController();
  const url = new URL(path, base);
  const response = await fetch(new Request(url, { headers, signal: controller.signal }));
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return new SseReader<T>(response.body!.getReader(), url.pathname, controller);
}

export const turnPath = (sessionId: string, turnId: string): string => `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;

/** The Turn stream after `afterRevision` (0 replays every durable event); `null` starts at the current snapshot. */
export function watchTurn(h: Api, sessionId: string, turnId: string, afterRevision: number | null = 0, headers: Record<string, string> = {}) {
  const query = afterRevision !== null ? `?afterRevision=${afterRevision}` : "";
  return openSse<TurnStreamEvent>(h.fetch, h.api.baseUrl, `${turnPath(sessionId, turnId)}${query}`, headers);
}

/** Waits (on the Turn stream, durable events replayed) for the first event of `type` that satisfies `predicate`. */
export async function waitForTurnEvent<K extends TurnStreamEvent["type"]>(
  h: Api,
  sessionId: string,
  turnId: string,
  type: K,
  predicate: (event: Extract<TurnStreamEvent, { type: K }>) => boolean = () => true,
): Promise<Extract<TurnStreamEvent, { type: K }>> {
  const stream = await watchTurn(h, sessionId, turnId, 0);
  try {
    return (await stream.until((event) => event.type === type && predicate(event as Extract<TurnStreamEvent, { type: K }>), type)) as Extract<
      TurnStreamEvent,
      { type: K }
    >;
  } finally {
    stream.close();
  }
}

/**
 * Watches a Turn from revision 0 to its end: every durable event replayed plus live ones.
 * Asserts the stream shape (snapshot first, exactly one `turn.finished`, last, then the end).
 */
export async function runToEnd(h: Api, sessionId: string, turnId: string): Promise<{ events: TurnStreamEvent[]; turn: Turn }> {
  const stream = await watchTurn(h, sessionId, turnId, 0);
  const events = await stream.rest();
  expect(events[0]?.type).toBe("turn.snapshot");
  expect(events.filter((event) => event.type === "turn.finished")).toHaveLength(1);
  expect(events[events.length - 1]!.type).toBe("turn.finished");
  return { events, turn: await getTurn(h, sessionId, turnId) };
}

// -------------------------------------------------------------------------------------------
// API shortcuts

export const getTurn = async (h: Api, sessionId: string, turnId: string): Promise<Turn> =>
  (await ok(sdk.getTurn({ client: h.api.client, path: { server, sessionId, turnId } }))).turn;

export const getSession = async (h: Api, sessionId: string): Promise<Session> =>
  (await ok(sdk.getSession({ client: h.api.client, path: { server, sessionId } }))).session;

/** submitPrompt; `clientId: null` leaves the client-id header out. */
export function submitCall(h: Api, sessionId: string, body: unknown, clientId: string | null = CLIENT) {
  return sdk.submitPrompt({
    client: h.api.client,
    path: { server, sessionId },
    headers: (clientId !== null ? { "x-ze-harness-client-id": clientId } : {}) as never,
    body: body as never,
  });
}

export const text = (value: string) => [{ type: "text" as const, text: value }];

export async function queue(h: Api, sessionId: string, prompt: string, extra: Record<string, unknown> = {}): Promise<PromptReceipt & { delivery: "queue" }> {
  const body = { delivery: "queue", turnId: randomUUID(), prompt: text(prompt), ...extra };
  return (await ok(submitCall(h, sessionId, body))).receipt as PromptReceipt & { delivery: "queue" };
}

export async function steer(h: Api, sessionId: string, expectedTurnId: string, prompt: string, steerId: string = randomUUID()) {
  const body = { delivery: "steer", steerId, expectedTurnId, prompt: text(prompt) };
  return (await ok(submitCall(h, sessionId, body))).receipt as PromptReceipt & { delivery: "steer" };
}

export const steerFailure = (h: Api, sessionId: string, expectedTurnId: string, prompt: string, steerId: string = randomUUID()) =>
  failure(submitCall(h, sessionId, { delivery: "steer", steerId, expectedTurnId, prompt: text(prompt) }));

export const cancel = async (h: Api, sessionId: string, turnId: string, reason?: string): Promise<Turn> =>
  (await ok(sdk.cancelTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: reason !== undefined ? { reason } : {} }))).turn;

export async function listTurns(h: Api, sessionId: string, query: Record<string, string> = {}) {
  return ok(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId }, query }));
}

export const replyPermission = (h: Api, sessionId: string, requestId: string, reply: "once" | "always" | "reject", message?: string) =>
  sdk.replyPermission({
    client: h.api.client,
    path: { server, sessionId, permissionRequestId: requestId },
    body: { reply, ...(message !== undefined ? { message } : {}) },
  });

/** Every text the model saw in a request body, whatever the protocol (for "the model sees X"). */
export const seen = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? null);

// -------------------------------------------------------------------------------------------
// A real `serve` process wired to an in-process test model

export interface ServedModel extends Api {
  readonly url: string;
  readonly process: ServeProcess;
}

/**
 * Starts the built binary's `serve` on `database` in `home`, whose global config points at
 * `model` (written into the home's XDG config dir). Run `npm run build` first.
 */
export async function serveWithModel(home: TempHome, model: TestModel, database: string, config: Record<string, unknown> = {}): Promise<ServedModel> {
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), ...config });
  const started = await startServe(["--database", database], home.env, home.root);
  return { url: started.url, process: started, api: networkClient(started.url), fetch: networkFetch };
}

export async function createSession(h: Api, body: Record<string, unknown> = {}): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: h.api.client, path: { server, sessionId }, body }));
  return sessionId;
}

/**
 * Resources for suites over real `serve` processes: a temp home, a test model and a database
 * path per test (`setup`), `serve` processes (killed after the test), and `cleanups` the test
 * may add to; everything is torn down after each test, last first.
 */
export function processResources(prefix: string, config: (model: TestModel) => Record<string, unknown> | undefined = () => undefined) {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    async setup(): Promise<{ home: TempHome; model: TestModel; database: string }> {
      const home = tempHome(prefix);
      cleanups.push(() => home.cleanup());
      const model = await startTestModel();
      cleanups.push(() => model.close());
      const extra = config(model);
      if (extra) writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), ...extra });
      return { home, model, database: join(home.dir, "shared.db") };
    },
    async serve(home: TempHome, model: TestModel, database: string): Promise<ServedModel> {
      const served = await serveWithModel(home, model, database);
      cleanups.push(() => served.process.stop("SIGKILL"));
      return served;
    },
  };
}
