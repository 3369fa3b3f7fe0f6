// A planted marker key must appear in exactly one place: the 0600 auth.json. It is connected
// through a real `serve` over HTTP and used by a Turn; then every response body, SSE event,
// error message, the server's stderr, every process argument `ps` shows, the database file and
// its WAL, and the test model's own recording are searched for it.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  connectProviderKey,
  createZeClient,
  getProvider,
  listProviders,
  sdk,
  startProviderLogin,
  unwrap,
  updateProviderConnection,
  waitProviderLogin,
} from "../../clients/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { assertBuilt } from "../support/cli.js";
import { startOAuthServer, type OAuthServer } from "./oauth-server.js";
import { gateProvider, keyedProvider } from "./provider-harness.js";

let serve: ServeProcess | undefined;
let model: TestModel | undefined;
let oauth: OAuthServer | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await serve?.stop();
  await model?.close();
  await oauth?.close();
  home?.cleanup();
  serve = model = oauth = home = undefined;
});

describe("a planted secret marker", () => {
  it("reaches the provider (as its hash in the recording) and auth.json, and nothing else", async () => {
    assertBuilt();
    const MARKER = `sk-MARKER${randomBytes(12).toString("hex")}`;
    const folded = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");
    const leaks = (text: string) => text.includes(MARKER) || folded(text).includes(folded(MARKER));

    model = await startTestModel();
    oauth = await startOAuthServer();
    home = tempHome("ze-marker-");
    writeGlobalConfig(home, { model: TEST_MODEL, providers: { ...testProviderConfig(model), keyed: keyedProvider(model), gate: gateProvider(model, oauth) } });
    serve = await startServe(["--token", "marker-test-token"], home.env, home.root);

    // Every response body the client sees.
    const seen: string[] = [];
    const api = createZeClient({
      baseUrl: serve.url,
      token: "marker-test-token",
      fetch: async (request) => {
        const response = await globalThis.fetch(request);
        if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) seen.push(await response.clone().text());
        return response;
      },
    });

    const connection = await connectProviderKey(api, "keyed", { apiKey: MARKER, label: "marker" });
    await updateProviderConnection(api, "keyed", connection.connectionId, { label: "renamed" });
    await listProviders(api);
    await getProvider(api, "keyed");
    // Refused input that carries the marker: the errors must not echo it.
    // One at a time: calls started together would reject before the loop awaits them (an unhandled rejection).
    for (const call of [
      () => connectProviderKey(api, "keyed", { apiKey: `${MARKER} trailing` }),
      () => connectProviderKey(api, "keyed", { apiKey: `${MARKER}\n` }),
      () => connectProviderKey(api, "nope", { apiKey: MARKER }),
      () => connectProviderKey(api, "test", { apiKey: MARKER }),
      () => connectProviderKey(api, "keyed", { apiKey: MARKER, label: `${MARKER}${"x".repeat(300)}` }),
    ]) {
      const error = await call().then(() => undefined, (failure: unknown) => failure as Error);
      expect(error).toBeDefined();
      expect(leaks(error!.message)).toBe(false);
    }
    // A login beside it (tokens are not the marker, but the flow runs through the same host).
    oauth.polls.push("approve");
    const login = await startProviderLogin(api, "gate");
    await waitProviderLogin(api, "gate", login.loginId);

    // A Turn with the key: one answer, then one provider error that echoes the key back.
    const events: string[] = [];
    const runTurn = async (sessionId: string, turnId: string) => {
      await unwrap(sdk.createSession({ client: api.client, path: { server: "local", sessionId }, body: {} }));
      await unwrap(
        sdk.submitPrompt({
          client: api.client,
          path: { server: "local", sessionId },
          headers: { "x-ze-harness-client-id": "marker" },
          body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }], model: "keyed/m" },
        }),
      );
      const { stream } = await sdk.watchTurn({ client: api.client, path: { server: "local", sessionId, turnId }, sseMaxRetryAttempts: 0 });
      for await (const event of stream) {
        events.push(JSON.stringify(event));
        if ((event as { type?: string }).type === "turn.finished") break;
      }
      return (await unwrap(sdk.getTurn({ client: api.client, path: { server: "local", sessionId, turnId } }))).turn;
    };
    model.enqueue({ events: [{ type: "text", text: "fine" }] });
    const ok = await runTurn(crypto.randomUUID(), crypto.randomUUID());
    expect(ok.outcome?.kind).toBe("completed");
    model.enqueue({ error: { status: 401, body: { error: { message: `Incorrect API key provided: ${MARKER}`, code: MARKER } } } });
    const failed = await runTurn(crypto.randomUUID(), crypto.randomUUID());
    expect(failed.outcome?.kind).toBe("failed");
    await unwrap(sdk.listSessions({ client: api.client, path: { server: "local" } }));

    // The provider got it (its hash is what the test model recorded) …
    expect(model.requests.map((request) => request.credentialSha256)).toEqual([credentialHash(MARKER), credentialHash(MARKER)]);
    expect(leaks(JSON.stringify(model.requests))).toBe(false);
    // … and auth.json holds it (so the search below looks for something that exists).
    const stateDir = join(home.env["XDG_DATA_HOME"]!, "ze-harness");
    expect(readFileSync(join(stateDir, "auth.json"), "utf8")).toContain(MARKER);

    const processes = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    expect(processes).toContain("serve");
    const database = join(stateDir, "ze-harness.db");
    expect(existsSync(database)).toBe(true);
    const files = [database, `${database}-wal`].filter(existsSync).map((file) => readFileSync(file).toString("latin1"));
    expect(files.length).toBeGreaterThan(0);
    const places: [string, string][] = [
      ["response bodies", seen.join("\n")],
      ["SSE events", events.join("\n")],
      ["server stderr", serve.stderr()],
      ["process arguments", processes],
      ...files.map((bytes, index): [string, string] => [`database file ${index}`, bytes]),
    ];
    expect(seen.length).toBeGreaterThan(10);
    expect(events.length).toBeGreaterThan(2);
    for (const [place, text] of places) expect(leaks(text), place).toBe(false);
  });
});
