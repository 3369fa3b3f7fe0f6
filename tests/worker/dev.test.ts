// The Worker host end to end in workerd: `npm run worker:dev -- --port 0` (bundle + miniflare)
// prints its base URL first; the generated client (responses checked against the contract)
// creates, reads, lists and deletes Sessions through the gateway and each server's own
// HarnessServerObject; the bearer token, identity headers and typed unavailable answers hold;
// and the built CLI works against it with --remote.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { assertBuilt, runCli, jsonOf } from "../support/cli.js";
import { networkClient, repoRoot, tempHome, type TempHome } from "../support/harness.js";

const TOKEN = "worker-test-token";
const S1 = "0beb6619-0000-4000-8000-00000000a001";
const S2 = "0beb6619-0000-4000-8000-00000000a002";

let child: ChildProcess;
let url: string;
let persist: string;
let home: TempHome;

beforeAll(async () => {
  persist = mkdtempSync(join(tmpdir(), "zh-worker-dev-"));
  home = tempHome("zh-worker-cli-");
  child = spawn(process.execPath, [join(repoRoot, "tools", "worker", "dev.mjs"), "--port", "0", "--persist", persist], {
    cwd: repoRoot,
    env: { PATH: process.env["PATH"] ?? "", HOME: home.env["HOME"]!, HARNESS_API_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`worker:dev exited with ${code} before printing its URL: ${stderr}`)));
  });
}, 60_000);

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(persist, { recursive: true, force: true });
  home.cleanup();
});

describe("the Worker host in workerd (npm run worker:dev)", () => {
  it("serves the Session operations per server through the generated client", async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { client } = networkClient(url, TOKEN);
    const created = await ok(sdk.createSession({ client, path: { server: "alpha", sessionId: S1 }, body: { workdir: "app" } }));
    expect(created.session).toMatchObject({ id: S1, workdir: "app", projectId: "global", nextSequence: 1 });
    // Replaying the same creation returns the same Session; a different body is a conflict.
    expect(await ok(sdk.createSession({ client, path: { server: "alpha", sessionId: S1 }, body: { workdir: "app" } }))).toEqual(created);
    expect((await failure(sdk.createSession({ client, path: { server: "alpha", sessionId: S1 }, body: {} }))).status).toBe(409);
    expect((await ok(sdk.getSession({ client, path: { server: "alpha", sessionId: S1 } }))).session).toEqual(created.session);
    await ok(sdk.createSession({ client, path: { server: "alpha", sessionId: S2 }, body: {} }));
    expect((await ok(sdk.listSessions({ client, path: { server: "alpha" } }))).sessions.map((session) => session.id)).toEqual([S1, S2]);
    // Another server name is another object with its own database.
    expect((await ok(sdk.listSessions({ client, path: { server: "beta" } }))).sessions).toEqual([]);
    expect((await failure(sdk.getSession({ client, path: { server: "beta", sessionId: S1 } }))).status).toBe(404);
    // A workdir outside /workspace is refused.
    expect((await failure(sdk.createSession({ client, path: { server: "alpha", sessionId: "0beb6619-0000-4000-8000-00000000a003" }, body: { workdir: "/etc" } }))).body._tag).toBe("ValidationError");

    expect(await ok(sdk.deleteSession({ client, path: { server: "alpha", sessionId: S2 } }))).toEqual({ deleted: { sessionId: S2 } });
    expect((await failure(sdk.getSession({ client, path: { server: "alpha", sessionId: S2 } }))).status).toBe(404);
    expect((await failure(sdk.createSession({ client, path: { server: "alpha", sessionId: S2 }, body: {} }))).body.message).toContain("retired");
    // The object's SQLite lives under the documented persist directory.
    expect(readdirSync(persist, { recursive: true }).some((name) => String(name).endsWith(".sqlite"))).toBe(true);
  });

  it("demands the token, keeps the identity headers its own, and answers what a Worker lacks as typed 503s", async () => {
    const { client: anonymous } = networkClient(url);
    expect((await failure(sdk.listSessions({ client: anonymous, path: { server: "alpha" } }))).status).toBe(401);
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);

    // A client's own x-zephyr-server cannot redirect a request to another server's object.
    const spoofed = await fetch(`${url}/v1/servers/beta/sessions`, { headers: { authorization: `Bearer ${TOKEN}`, "x-zephyr-server": "alpha" } });
    expect(((await spoofed.json()) as { sessions: unknown[] }).sessions).toEqual([]);

    const { client } = networkClient(url, TOKEN);
    const terminals = await failure(sdk.listTerminals({ client, path: { server: "alpha", sessionId: S1 } }));
    expect(terminals).toMatchObject({ status: 503, body: { _tag: "UnavailableError", message: "terminals are unavailable because Workers cannot spawn local processes" } });
    const login = await failure(sdk.startProviderLogin({ client, path: { providerId: "openai" }, body: {} as never }));
    expect(login.status).toBe(503);
  });

  it("streams the server's activity: the cursor first, then each Session created, replayable from a cursor", async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const abort = new AbortController();
    const response = await fetch(`${url}/v1/servers/gamma/events`, { headers, signal: abort.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const until = async (needle: string): Promise<void> => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${needle}: ${text}`);
        text += value;
      }
    };
    await until('"type":"server.cursor"');
    const { client } = networkClient(url, TOKEN);
    await ok(sdk.createSession({ client, path: { server: "gamma", sessionId: S1 }, body: {} }));
    await until('"type":"session.created"');
    expect(text).toContain(`"id":"${S1}"`);
    abort.abort();
    await reader.cancel().catch(() => undefined);

    // Replayed from cursor 0: the creation is there without waiting for anything live.
    const replay = new AbortController();
    const again = await fetch(`${url}/v1/servers/gamma/events?afterServerCursor=0`, { headers, signal: replay.signal });
    const replayed = again.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes('"type":"session.created"')) seen += (await replayed.read()).value ?? "";
    expect(seen).toContain(`"id":"${S1}"`);
    replay.abort();
    await replayed.cancel().catch(() => undefined);
  });

  it("serves the CLI with --remote: session create and session list --all", async () => {
    assertBuilt();
    const options = { env: home.env, cwd: home.root };
    const created = await runCli(["--remote", url, "--token", TOKEN, "session", "create", "--session", "0beb6619-0000-4000-8000-00000000a004"], options);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(jsonOf(created)).toMatchObject({ id: "0beb6619-0000-4000-8000-00000000a004", workdir: ".", projectId: "global" });
    const listed = await runCli(["--remote", url, "--token", TOKEN, "session", "list", "--all"], options);
    expect(listed.code).toBe(0);
    expect(jsonOf<{ id: string }[]>(listed).map((session) => session.id)).toContain("0beb6619-0000-4000-8000-00000000a004");
  });
});
