// WorkerHarnessHost embedded in a host Durable Object (tests/worker/fixtures/embed-object.ts), in
// workerd through miniflare, with the scripted model at a loopback baseURL: a Turn through
// `host.fetch` (the generated client, no token) runs on the injected key; `watchTurn` yields the
// live deltas and ends by itself after the terminal event; `watchSession` replays the Session's
// history; `watchServer` starts with `server.cursor` live and replays after a cursor; `resources()`
// reports the compiled provider, the unknown id left out under 'report' and the bundled catalog
// kept over a stale supplied one; a host participant set due runs from the object's `alarm()`.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ZeClient } from "../../clients/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { networkClient, repoRoot } from "../support/harness.js";
import { bundle, miniflare } from "./support.js";

const INJECTED_KEY = "injected-key-for-the-embedded-host";
const AMBIENT_KEY = "ambient-key-that-must-not-be-used";

let model: TestModel;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];

beforeAll(async () => {
  model = await startTestModel();
  const script = await bundle("tests/worker/fixtures/embed-object.ts");
  mf = miniflare(script, {
    durableObjects: { EMBED: { className: "EmbedObject", useSQLite: true } },
    bindings: {
      EMBED_PROVIDERS: JSON.stringify({
        test: {
          definition: {
            displayName: "Scripted test model",
            baseURL: model.openaiBaseURL,
            protocol: "chat",
            authentication: { kind: "bearer" },
            credentials: { environment: ["EMBED_TEST_KEY"] },
            models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
          },
        },
      }),
      EMBED_INJECTED_KEY: INJECTED_KEY,
      EMBED_TEST_KEY: AMBIENT_KEY,
    },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
});

const fixture = async <T>(path: string): Promise<T> => {
  const response = await fetch(`${url}${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
};

/** Reads NDJSON lines as they arrive. */
async function* lines(response: Response): AsyncGenerator<any> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  }
}

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server: "embedded", sessionId }, body: {} }));
  return sessionId;
}

describe("WorkerHarnessHost embedded in a host Durable Object (workerd)", () => {
  let sessionId: string;
  let turnId: string;

  it("runs a Turn through host.fetch on the injected key; watchTurn yields its deltas and ends after the terminal event", async () => {
    // The model answers only once the watch is open, so the deltas are seen live.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    model.reply(async () => {
      await gate;
      return { events: [{ type: "text", text: "Hello from " }, { type: "text", text: "the embedded host." }] };
    });
    sessionId = await createSession();
    turnId = randomUUID();
    const receipt = await ok(
      sdk.submitPrompt({
        client,
        path: { server: "embedded", sessionId },
        headers: { "x-ze-harness-client-id": "embed-test" },
        body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] } as never,
      }),
    );
    expect(receipt.receipt).toMatchObject({ turnId });

    const response = await fetch(`${url}/fixture/watch-turn?sessionId=${sessionId}&turnId=${turnId}`);
    expect(response.status).toBe(200);
    const events: any[] = [];
    for await (const event of lines(response)) {
      events.push(event);
      // The first event (the Turn's snapshot) means the watch is subscribed: let the model answer.
      if (events.length === 1) release();
    }
    expect(events[0]).toMatchObject({ type: "turn.snapshot", turn: { id: turnId } });
    // The iterator ended by itself, right after the terminal event.
    expect(events.at(-1)).toEqual({ fixture: "ended" });
    expect(events.at(-2)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Hello from the embedded host." } });
    const deltas = events.filter((event) => event.type === "turn.text.delta");
    expect(deltas.map((event) => event.delta).join("")).toBe("Hello from the embedded host.");
    expect(events.filter((event) => event.type === "turn.finished")).toHaveLength(1);

    // The model request carried the injected key, not the binding ambient discovery would have found.
    const request = model.requests.at(-1)!;
    expect(request.credentialSha256).toBe(credentialHash(INJECTED_KEY));
    expect(request.credentialSha256).not.toBe(credentialHash(AMBIENT_KEY));
    // Through host.fetch the same Turn reads back over the API.
    const turn = (await ok(sdk.getTurn({ client, path: { server: "embedded", sessionId, turnId } }))).turn;
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Hello from the embedded host." });
  });

  it("watchTurn after the Turn finished replays from a revision and still ends; watchSession replays the Session's history", async () => {
    const response = await fetch(`${url}/fixture/watch-turn?sessionId=${sessionId}&turnId=${turnId}&afterRevision=0`);
    const events: any[] = [];
    for await (const event of lines(response)) events.push(event);
    expect(events[0]).toMatchObject({ type: "turn.snapshot" });
    expect(events.at(-2)).toMatchObject({ type: "turn.finished" });
    expect(events.at(-1)).toEqual({ fixture: "ended" });

    const session = await fixture<any[]>(`/fixture/watch-session?sessionId=${sessionId}&until=session.cursor`);
    expect(session.at(-1)).toMatchObject({ type: "session.cursor" });
    expect(session.some((event) => event.type === "session.turn.finished" && event.turnId === turnId)).toBe(true);
  });

  it("watchServer starts live with server.cursor, and replays every stamped row after a cursor", async () => {
    const live = await fixture<any[]>("/fixture/watch-server?take=1");
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ type: "server.cursor" });
    expect(live[0].serverCursor).toBeGreaterThan(0);

    const replayed = await fixture<any[]>("/fixture/watch-server?afterServerCursor=0&until=session.created");
    expect(replayed.at(-1)).toMatchObject({ type: "session.created", session: { id: sessionId } });

    // host.fetch serves the server-level routes too: the Session list.
    const listed = await ok(sdk.listSessions({ client, path: { server: "embedded" } }));
    expect(JSON.stringify(listed)).toContain(sessionId);
  });

  it("reports what it compiled: the provider, the unknown id it left out, the bundled catalog over a stale supplied one", async () => {
    const resources = await fixture<any>("/fixture/resources");
    expect(resources.providerIds).toEqual(["test"]);
    expect(resources.rejectedProviders).toEqual([{ providerId: "no-such-provider", message: expect.stringContaining("no-such-provider") }]);
    expect(resources.modelCatalog).toMatchObject({ source: "bundled", contentRevision: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(resources.modelCatalog.diagnostic).toContain("the supplied model catalog was not used");
    // No key in what the host reports.
    expect(JSON.stringify(resources)).not.toContain(INJECTED_KEY);
  });

  it("serves the dashboard page at GET /dashboard for its server, built into the bundle, under the page's policy", async () => {
    const response = await fetch(`${url}/dashboard`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await response.text();
    expect(html).toContain('<meta name="ze-harness-server" content="embedded">');
    // The built page (npm run build ran before the suite): its one script, allowed by its hash.
    const built = JSON.parse(readFileSync(join(repoRoot, "dist", "dashboard.json"), "utf8")) as { scriptHash: string };
    expect(response.headers.get("content-security-policy")).toContain(`script-src '${built.scriptHash}'`);
    expect(html).toContain("<script>");
  });

  it("runs a host alarm participant from the object's alarm() once it is due", async () => {
    expect(await fixture<{ runs: number }>("/fixture/participant-runs")).toEqual({ runs: 0 });
    const armed = await fixture<{ armed: number | null }>("/fixture/participant-due?inMs=0");
    expect(armed.armed).not.toBeNull();
    // Miniflare fires the Durable Object alarm at its time; wait for its effect.
    await expect.poll(async () => (await fixture<{ runs: number }>("/fixture/participant-runs")).runs, { timeout: 20_000, interval: 100 }).toBe(1);
  });
});
