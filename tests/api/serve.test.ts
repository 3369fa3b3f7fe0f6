// A real `ze-harness serve` process (the built binary, dist/), reached over TCP with the
// generated client and contract checking. Run `npm run build` first (`npm test` does).
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type Session } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { networkClient, networkFetch, startHarness, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";

const server = "local";

beforeAll(() => {
  assertBuilt();
});

// Every process and home a test starts is stopped and removed, also when the test fails.
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function home(): TempHome {
  const created = tempHome("ze-serve-");
  cleanups.push(() => created.cleanup());
  return created;
}

async function serve(args: readonly string[], at: TempHome = home()): Promise<ServeProcess & { home: TempHome }> {
  const started = await startServe(args, at.env, at.root);
  cleanups.push(() => started.stop("SIGKILL"));
  return Object.assign(started, { home: at });
}

/** Resolves with the exit code and how long the process took to exit after `signal`. */
async function stopTimed(target: ServeProcess, signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const code = await target.stop(signal);
  return { code, ms: Date.now() - started };
}

describe("ze-harness serve", () => {
  it("prints its base URL on 127.0.0.1 with a free port as the first stdout line", async () => {
    const [a, b] = await Promise.all([serve([]), serve([])]);
    for (const started of [a, b]) expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const portOf = (url: string) => Number(new URL(url).port);
    expect(portOf(a.url)).toBeGreaterThan(0);
    expect(portOf(b.url)).toBeGreaterThan(0);
    expect(portOf(a.url)).not.toBe(portOf(b.url));
    const health = await ok(sdk.health({ client: networkClient(a.url).client }));
    expect(health).toEqual({ status: "ok" });
  });

  it("creates, lists, gets and deletes Sessions over HTTP with the generated client", async () => {
    const { url } = await serve([]);
    const { client } = networkClient(url);
    const id = randomUUID();
    const { session } = await ok(sdk.createSession({ client, path: { server, sessionId: id }, body: { defaultModel: "test/m" } }));
    expect(session).toMatchObject({ id, workdir: ".", projectId: "global", defaultModel: "test/m" });
    expect(await ok(sdk.listSessions({ client, path: { server } }))).toEqual({ sessions: [session] });
    expect(await ok(sdk.getSession({ client, path: { server, sessionId: id } }))).toEqual({ session });
    expect(await ok(sdk.deleteSession({ client, path: { server, sessionId: id } }))).toEqual({ deleted: { sessionId: id } });
    expect(await failure(sdk.getSession({ client, path: { server, sessionId: id } }))).toMatchObject({
      status: 404,
      body: { _tag: "NotFoundError", resource: "session" },
    });
    expect(await ok(sdk.listSessions({ client, path: { server } }))).toEqual({ sessions: [] });
  });

  it("sends Ze-Harness-Version on network responses", async () => {
    const { url } = await serve([]);
    const response = await networkFetch(new Request(`${url}/v1/health`));
    expect(response.headers.get("ze-harness-version")).toMatch(/^2\/\d+\.\d+\.\d+/);
  });

  it("refuses a body over 1 MiB over the network and keeps serving", async () => {
    const { url } = await serve([]);
    const { client } = networkClient(url);
    const id = randomUUID();
    const error = await failure(sdk.createSession({ client, path: { server, sessionId: id }, body: { systemPrompt: "x".repeat(1024 * 1024) } }));
    expect(error).toMatchObject({ status: 413, body: { _tag: "ValidationError", message: expect.stringMatching(/1048576-byte limit/) } });
    expect(await ok(sdk.listSessions({ client, path: { server } }))).toEqual({ sessions: [] });
  });

  it("with --token demands the bearer on operations, keeps health public", async () => {
    const { url } = await serve(["--token", "t0ken"]);
    const anonymous = networkClient(url).client;
    expect(await failure(sdk.listSessions({ client: anonymous, path: { server } }))).toMatchObject({ status: 401, body: { _tag: "UnauthorizedError" } });
    expect(await failure(sdk.listSessions({ client: networkClient(url, "wrong").client, path: { server } }))).toMatchObject({ status: 401 });
    expect(await ok(sdk.health({ client: anonymous }))).toEqual({ status: "ok" });
    expect(await ok(sdk.listSessions({ client: networkClient(url, "t0ken").client, path: { server } }))).toEqual({ sessions: [] });
  });

  it.each(["SIGTERM", "SIGINT"] as const)("exits with code 0 promptly on %s", async (signal) => {
    const started = await serve([]);
    // Make it do real work first, so the database is open and in use.
    await ok(sdk.createSession({ client: networkClient(started.url).client, path: { server, sessionId: randomUUID() }, body: {} }));
    const { code, ms } = await stopTimed(started, signal);
    expect(code).toBe(0);
    // A foreground serve writes only logfmt lines to stderr: without a token, first that it asks for
    // none (tests/trust/own-user.test.ts), then its connection lines.
    const lines = started.stderr().split("\n").filter((line) => line !== "");
    expect(lines[0]).toMatch(/^timestamp=\S+ level=WARN run=[0-9a-f]+ service=server event=server\.unauthenticated message="serving without a token: [^"]+"$/);
    const connection = /^timestamp=\S+ level=INFO run=[0-9a-f]+ service=server event=client\.(connect|disconnect) connectionId=\S+ remoteAddr=127\.0\.0\.1 remotePort=\d+( durationMs=\d+)?$/;
    expect(lines.slice(1).filter((line) => !connection.test(line))).toEqual([]);
    expect(lines.some((line) => line.includes("event=client.connect"))).toBe(true);
    expect(ms).toBeLessThan(5_000);
  });

  it("exits with code 0 on SIGTERM while a client holds a keep-alive connection", async () => {
    const started = await serve([]);
    // Node's fetch pools the connection, so it stays open and idle after the response.
    const response = await networkFetch(new Request(`${started.url}/v1/health`));
    expect(response.status).toBe(200);
    const { code, ms } = await stopTimed(started, "SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5_000);
  });

  it("shares one database file with an in-process harness: each sees the other's Sessions", async () => {
    const shared = home();
    const database = join(shared.dir, "shared.db");
    const served = await serve(["--database", database], shared);
    const inProcess = await startHarness({ database, env: shared.env, serverRoot: shared.root });
    cleanups.push(() => inProcess.close());
    const overHttp = networkClient(served.url).client;
    const local = inProcess.api.client;

    const a = randomUUID();
    const b = randomUUID();
    const { session: fromServe } = await ok(sdk.createSession({ client: overHttp, path: { server, sessionId: a }, body: {} }));
    const { session: fromHarness } = await ok(sdk.createSession({ client: local, path: { server, sessionId: b }, body: { defaultModel: "test/m" } }));

    expect(await ok(sdk.getSession({ client: local, path: { server, sessionId: a } }))).toEqual({ session: fromServe });
    expect(await ok(sdk.getSession({ client: overHttp, path: { server, sessionId: b } }))).toEqual({ session: fromHarness });
    const ids = (sessions: Session[]) => sessions.map((s) => s.id).sort();
    expect(ids((await ok(sdk.listSessions({ client: overHttp, path: { server } }))).sessions)).toEqual([a, b].sort());
    expect(ids((await ok(sdk.listSessions({ client: local, path: { server } }))).sessions)).toEqual([a, b].sort());

    // A deletion on one side retires the id for the other.
    await ok(sdk.deleteSession({ client: local, path: { server, sessionId: a } }));
    expect(await failure(sdk.createSession({ client: overHttp, path: { server, sessionId: a }, body: {} }))).toMatchObject({ status: 409 });
  });

  it("refuses --hostname 0.0.0.0 without --token: non-zero exit and one clear stderr line", async () => {
    const at = home();
    const result = await runCli(["serve", "--port", "0", "--hostname", "0.0.0.0"], { env: at.env, cwd: at.root });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/0\.0\.0\.0/);
    expect(result.stderr).toMatch(/--token/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("listens on 0.0.0.0 when --token is given, and demands it", async () => {
    const { url } = await serve(["--hostname", "0.0.0.0", "--token", "t0ken"]);
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const loopback = url.replace("0.0.0.0", "127.0.0.1");
    expect(await failure(sdk.listSessions({ client: networkClient(loopback).client, path: { server } }))).toMatchObject({ status: 401 });
    expect(await ok(sdk.listSessions({ client: networkClient(loopback, "t0ken").client, path: { server } }))).toEqual({ sessions: [] });
  });
});
