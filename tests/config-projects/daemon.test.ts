// The shared daemon through the built binary applies each command's own project file: a daemon
// started by a command in project A serves a `run` in project B with B's deny rule (the model's
// `read` of B's notes is neither offered nor run), picks up a rule added to B's file without
// `service restart`, and a broken B file fails B's command with the one-line error naming the file
// while A keeps working. Its own HOME/XDG dirs, the scripted test model, and a daemon it stops.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type RecordedRequest, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, scriptByPrompt } from "../support/cli.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "../daemon/support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
});
afterAll(async () => {
  await model?.close();
});
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

const toolsOf = (request: RecordedRequest): string[] => ((request.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
/** The model requests whose body carries `marker`. */
const requestsFor = (marker: string): RecordedRequest[] => model.requests.filter((request) => JSON.stringify(request.body).includes(marker));

/** A project directory with its notes file (and, given one, its `ze-harness.config.json`). */
function project(h: DaemonHome, name: string, config?: unknown): { dir: string; file: string } {
  const dir = join(h.root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "notes.txt"), `${name.toUpperCase()}-SECRET-NOTES`);
  const file = join(dir, "ze-harness.config.json");
  if (config !== undefined) writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config));
  return { dir, file };
}

/** Scripts `marker` to read notes.txt, then answer `done`. */
const readNotes = (marker: string) =>
  script(marker, { events: [{ type: "tool_call", name: "read", arguments: { filePath: "notes.txt" } }] }, { events: [{ type: "text", text: "done" }] });

describe("one daemon, several projects", () => {
  it("a run in project B gets B's deny rule although the daemon started in A; edits apply without restart; a broken B file fails only B", async () => {
    const h = (home = daemonHome(model));
    const a = project(h, "a");
    const b = project(h, "b", { permissions: [{ action: "read", resource: "*", effect: "deny" }] });

    // The first command, in A, starts the daemon there.
    script("hello-from-a", { events: [{ type: "text", text: "hi A" }] });
    expect(await h.cli(["run", "hello-from-a"], { cwd: a.dir })).toMatchObject({ code: 0, stdout: "hi A\n" });
    const daemon = h.registration()!.pid;

    // B's deny rule applies to B's run: read is not offered, and a call of it reads nothing.
    readNotes("read-in-b");
    const inB = await h.cli(["run", "read-in-b"], { cwd: b.dir });
    const [first, second] = requestsFor("read-in-b");
    expect(toolsOf(first!)).not.toContain("read");
    expect(JSON.stringify(second?.body ?? inB)).not.toContain("B-SECRET-NOTES");

    // A (no project file) reads its notes.
    readNotes("read-in-a");
    expect(await h.cli(["run", "read-in-a"], { cwd: a.dir })).toMatchObject({ code: 0, stdout: "done\n" });
    const [inA, afterRead] = requestsFor("read-in-a");
    expect(toolsOf(inA!)).toContain("read");
    expect(JSON.stringify(afterRead!.body)).toContain("A-SECRET-NOTES");

    // A deny rule added to A's project (a new file) applies at A's next run, same daemon.
    writeFileSync(a.file, JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "deny" }] }));
    readNotes("again-in-a");
    await h.cli(["run", "again-in-a"], { cwd: a.dir });
    expect(toolsOf(requestsFor("again-in-a")[0]!)).not.toContain("read");
    expect(JSON.stringify(requestsFor("again-in-a").map((request) => request.body))).not.toContain("A-SECRET-NOTES");

    // A broken B file fails B's command with one line naming the file; A keeps working.
    writeFileSync(b.file, "{ not json");
    const broken = await h.cli(["run", "broken-b"], { cwd: b.dir });
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain(`${b.file}: `);
    expect(broken.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(requestsFor("broken-b")).toHaveLength(0);
    script("still-a", { events: [{ type: "text", text: "A still works" }] });
    expect(await h.cli(["run", "still-a"], { cwd: a.dir })).toMatchObject({ code: 0, stdout: "A still works\n" });
    // All of it was one daemon.
    expect(h.registration()!.pid).toBe(daemon);
  });
});
