// Several `serve` hosts on one libSQL server (sqld) share Sessions (docs/scale.md). Each host runs
// in its own PID namespace (`unshare --pid --fork --mount-proc`: every host is pid 1 there, as on
// separate machines), so a pid says nothing about another host: only the lease does. One host is
// killed mid-Turn, one is paused past its lease and resumed; the third settles every accepted Turn
// once, no model call is made twice, and the resumed host changes nothing the survivor settled.
// Needs unshare (util-linux) and the built binary (`npm run build`).
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, unwrap, type Turn } from "../../clients/index.js";
import { startTestModel, type RecordedRequest, type ScriptedResponse, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { binPath, networkClient, tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { openDatabase } from "../../services/storage/index.js";
import { startSqld, type Sqld } from "../support/sqld.js";

const server = "local";
/** Short, so a lost host's Turns settle in seconds; renewed every third of it (1 s), ample under load. */
const LEASE_MS = 3_000;

interface Host {
  readonly name: string;
  readonly url: string;
  /** The host's node process as this (the root) PID namespace sees it; pid 1 inside its own. */
  readonly pid: number;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  assertBuilt();
});

/** The one child `unshare --fork` started (the host's node process). */
function childOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`unshare ${pid} has children ${JSON.stringify(children)}`);
  return Number(children[0]);
}

async function startHost(name: string, home: TempHome, root: string, database: string): Promise<Host> {
  const env = { ...home.env, ZE_HARNESS_LEASE_MS: String(LEASE_MS) };
  // --kill-child: a host whose unshare is killed (the test's cleanup) takes its namespace with it.
  const child: ChildProcess = spawn(
    "unshare",
    // CI runs as root; elsewhere a user namespace grants the PID namespace.
    [...(process.getuid?.() === 0 ? [] : ["--user", "--map-root-user"]), "--pid", "--fork", "--mount-proc", "--kill-child", process.execPath, binPath, "serve", "--port", "0", "--database", database, "--root", root],
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code} before printing its URL: ${stderr}`)));
  });
  return { name, url, pid: childOf(child.pid!), exited, stderr: () => stderr };
}

/** The text of the request's last user message: which Turn (by its marker) the model call is for. */
function lastUserText(request: RecordedRequest): string {
  const messages = ((request.body as { messages?: { role: string; content: unknown }[] }).messages ?? []).filter((message) => message.role === "user");
  return JSON.stringify(messages.at(-1)?.content ?? "");
}

async function createSession(url: string): Promise<string> {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: networkClient(url).client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

async function submit(url: string, sessionId: string, text: string): Promise<string> {
  const turnId = randomUUID();
  await unwrap(
    sdk.submitPrompt({
      client: networkClient(url).client,
      path: { server, sessionId },
      headers: { "x-ze-harness-client-id": "scale-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never,
    }),
  );
  return turnId;
}

/** Watches the Turn through `url` until its `turn.finished`, then reads it there. */
async function finished(url: string, sessionId: string, turnId: string): Promise<Turn> {
  const { client } = networkClient(url);
  const { stream } = await sdk.watchTurn({ client, path: { server, sessionId, turnId }, sseMaxRetryAttempts: 0 });
  for await (const event of stream) if ((event as { type?: string }).type === "turn.finished") break;
  return (await unwrap(sdk.getTurn({ client, path: { server, sessionId, turnId } }))).turn;
}

/** What a settled Turn is in the shared database: its row, parts and events. */
async function stored(sqld: Sqld, turnId: string): Promise<unknown> {
  const [row, parts, events] = await Promise.all([
    sqld.client.execute({ sql: "SELECT phase, revision, outcome, completed_at, messages, usage, owner_instance FROM turn WHERE id = ?", args: [turnId] }),
    sqld.client.execute({ sql: "SELECT ordinal, data FROM turn_part WHERE turn_id = ? ORDER BY ordinal", args: [turnId] }),
    sqld.client.execute({ sql: "SELECT revision, type, data FROM turn_event WHERE turn_id = ? ORDER BY id", args: [turnId] }),
  ]);
  return { row: row.rows.map((r) => ({ ...r })), parts: parts.rows.map((r) => ({ ...r })), events: events.rows.map((r) => ({ ...r })) };
}

describe("serve hosts on one sqld, each in its own PID namespace", () => {
  let model: TestModel;
  let sqld: Sqld;

  it("settles every accepted Turn once through the survivor when one host is killed and one paused past its lease", async () => {
    model = await startTestModel();
    cleanups.push(() => model.close());
    sqld = await startSqld();
    cleanups.push(() => sqld.stop());

    // The paused host's model call is answered only once it is stopped; its answer (a tool call
    // writing a file) would make a host that did not notice it lost the Turn write and call again.
    let pausedHost!: () => void;
    const paused = new Promise<void>((resolve) => (pausedHost = resolve));
    // A long Turn on the survivor spans every other host's maintenance passes (the resumed host's
    // first one runs at once: its timers are overdue). None may judge it lost while its lease is renewed.
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    model.reply(async (request): Promise<ScriptedResponse> => {
      const text = lastUserText(request);
      if (text.includes("[killed]")) return { hang: true };
      if (text.includes("[long]")) {
        await done;
        return { events: [{ type: "text", text: "finished last" }] };
      }
      if (text.includes("[paused]")) {
        await paused;
        return { events: [{ type: "tool_call", name: "write", arguments: { filePath: "stale.txt", content: "written after the lease ran out" } }] };
      }
      return { events: [{ type: "text", text: "done" }] };
    });

    // Every host has its own home (config, state) and the same server root: workdirs are reachable from each.
    const homes = [tempHome("ze-scale-"), tempHome("ze-scale-"), tempHome("ze-scale-")];
    for (const home of homes) {
      cleanups.push(() => home.cleanup());
      writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
    }
    const root = homes[0]!.root;
    // Migrated once here, so the hosts start side by side without racing to migrate.
    await (await openDatabase({ url: sqld.url, stateDirectory: homes[0]!.dir })).close();
    const [killed, pausing, survivor] = await Promise.all(["killed", "paused", "survivor"].map((name, i) => startHost(name, homes[i]!, root, sqld.url)));

    // Turns admitted through a host are claimed by it in the admission; the second of each Session waits behind the first.
    const [sk, sp, ss, sl] = await Promise.all([createSession(killed!.url), createSession(pausing!.url), createSession(survivor!.url), createSession(survivor!.url)]);
    const long = await submit(survivor!.url, sl, "[long] runs throughout");
    const k1 = await submit(killed!.url, sk, "[killed] first");
    const k2 = await submit(killed!.url, sk, "[k2] queued behind it");
    const p1 = await submit(pausing!.url, sp, "[paused] first");
    const p2 = await submit(pausing!.url, sp, "[p2] queued behind it");
    const s1 = await submit(survivor!.url, ss, "[s1] on the survivor");

    // Both first Turns are with the model: then one host dies and the other stops answering.
    const arrived = (marker: string) => model.requests.some((request) => lastUserText(request).includes(marker));
    for (let count = 1; !(arrived("[killed]") && arrived("[paused]") && arrived("[long]")); count++) await model.waitForRequest(count);
    process.kill(killed!.pid, "SIGKILL");
    process.kill(pausing!.pid, "SIGSTOP");
    pausedHost();

    // The survivor settles both lost Turns once their leases run out, then runs what waited behind them.
    const lost = await Promise.all([finished(survivor!.url, sk, k1), finished(survivor!.url, sp, p1)]);
    for (const turn of lost) expect(turn).toMatchObject({ phase: "failed", outcome: { kind: "failed", fault: { code: "process_lost" } } });
    const ran = await Promise.all([finished(survivor!.url, sk, k2), finished(survivor!.url, sp, p2), finished(survivor!.url, ss, s1)]);
    for (const turn of ran) expect(turn).toMatchObject({ phase: "completed" });
    const settled = await Promise.all([k1, p1, k2, p2].map((id) => stored(sqld, id)));
    expect(await killed!.exited).not.toBe(0);

    // The paused host resumes long after its lease ran out: it reads the model's answer, finds the
    // Turn no longer its own, and runs new work normally. A graceful stop waits for all it runs.
    process.kill(pausing!.pid, "SIGCONT");
    const p3 = await submit(pausing!.url, sp, "[p3] after the resume");
    expect(await finished(pausing!.url, sp, p3)).toMatchObject({ phase: "completed" });
    process.kill(pausing!.pid, "SIGTERM");
    expect(await pausing!.exited).toBe(0);
    allDone();
    expect(await finished(survivor!.url, sl, long)).toMatchObject({ phase: "completed" });

    // Nothing the survivor settled was changed; the stale tool call never ran.
    expect(await Promise.all([k1, p1, k2, p2].map((id) => stored(sqld, id)))).toEqual(settled);
    expect(existsSync(join(root, "stale.txt"))).toBe(false);
    // Every accepted Turn settled, and exactly once.
    const phases = await sqld.client.execute("SELECT phase, count(*) AS n FROM turn GROUP BY phase ORDER BY phase");
    expect(phases.rows.map((r) => ({ ...r }))).toEqual([
      { phase: "completed", n: 5 },
      { phase: "failed", n: 2 },
    ]);
    const finishes = await sqld.client.execute("SELECT turn_id, count(*) AS n FROM turn_event WHERE type = 'turn.finished' GROUP BY turn_id");
    const byTurn = (rows: { turn_id: string }[]) => [...rows].sort((a, b) => (a.turn_id < b.turn_id ? -1 : 1));
    expect(byTurn(finishes.rows.map((r) => ({ ...r }) as unknown as { turn_id: string }))).toEqual(byTurn([k1, k2, p1, p2, p3, s1, long].map((turnId) => ({ turn_id: turnId, n: 1 }))));
    // Each Turn reached the model once: the killed and paused Turns' calls were not made again.
    const calls = model.requests.map(lastUserText);
    for (const marker of ["[killed]", "[k2]", "[paused]", "[p2]", "[p3]", "[s1]", "[long]"]) expect(calls.filter((text) => text.includes(marker)), marker).toHaveLength(1);
    expect(calls).toHaveLength(7);
  }, 60_000);
});
