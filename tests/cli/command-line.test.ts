// The command line as a new user types it, through the built binary: connection flags before or
// after the subcommand, unknown commands, errors that name what could not be reached, and
// exiting once the output is written.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Session } from "../../clients/index.js";
import { assertBuilt, embedded, runCli, succeeded, type CliOptions, type CliResult } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const token = "cli-command-line-token";
let home: TempHome;
let options: CliOptions;
let serve: ServeProcess;

beforeAll(async () => {
  assertBuilt();
  home = tempHome("ze-cli-line-");
  options = { env: home.env, cwd: home.root };
  serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
});
afterAll(async () => {
  await serve?.stop();
  home?.cleanup();
});

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePromise(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

// Embedded unless a case chooses its connection (embedded() adds --embedded first otherwise).
const cli = (args: readonly string[]): Promise<CliResult> => runCli(embedded(args), options);

/** A usage error: exit 2, nothing on stdout, exactly one `error: …` line. */
function expectUsageError(result: CliResult, message?: string): void {
  expect(result).toMatchObject({ code: 2, stdout: "" });
  expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
  if (message !== undefined) expect(result.stderr).toBe(`error: ${message}\n`);
}

describe("connection flags before the subcommand", () => {
  it("--embedded and --database before `session create` / `session list` act as after them", async () => {
    const database = join(home.dir, "before-after.db");
    const before = await succeeded<Session>(cli(["--embedded", "--database", database, "session", "create", "--model", "openai/gpt-5"]));
    const after = await succeeded<Session>(cli(["session", "create", "--model", "openai/gpt-5", "--embedded", "--database", database]));
    const listedBefore = await succeeded<Session[]>(cli(["--database", database, "--embedded", "session", "list"]));
    const listedAfter = await succeeded<Session[]>(cli(["session", "list", "--database", database]));
    expect(listedBefore.map((session) => session.id)).toEqual([before.id, after.id]);
    expect(listedAfter).toEqual(listedBefore);
    // Nothing went to the default database.
    expect(await succeeded<Session[]>(cli(["session", "list", "--all"]))).toEqual([]);
  });

  it("--database=VALUE and --config FILE before the subcommand", async () => {
    const database = join(home.dir, "equals.db");
    const config = join(home.dir, "project.config.json");
    writeFileSync(config, JSON.stringify({ model: "openai/gpt-5" }));
    const created = await succeeded<Session>(cli([`--database=${database}`, "--config", config, "session", "create"]));
    expect(await succeeded<Session>(cli([`--database=${database}`, "session", "show", created.id]))).toEqual(created);
    // --config is read before the subcommand too: an invalid file fails with its path.
    writeFileSync(config, JSON.stringify({ model: 42 }));
    const invalid = await cli(["--config", config, "session", "list", "--database", database]);
    expect(invalid).toMatchObject({ code: 1, stdout: "" });
    expect(invalid.stderr).toMatch(/^error: [^\n]*project\.config\.json[^\n]*\n$/);
  });

  it("--remote URL --server NAME --token T before `session create`, `session show` and `turn list`", async () => {
    const remote = ["--remote", serve.url, "--server", "local", "--token", token];
    const created = await succeeded<Session>(cli([...remote, "session", "create"]));
    expect(await succeeded<Session>(cli([...remote, "session", "show", created.id]))).toEqual(created);
    expect(await succeeded<Session>(cli(["session", "show", created.id, ...remote]))).toEqual(created);
    const turns = await succeeded<{ sessionId: string; turns: unknown[] }>(cli([`--remote=${serve.url}`, `--token=${token}`, "turn", "list", created.id]));
    expect(turns).toMatchObject({ sessionId: created.id, turns: [] });
    // The Session went to the server, not to the local database.
    expect((await succeeded<Session[]>(cli(["session", "list", "--all"]))).map((session) => session.id)).not.toContain(created.id);
  });

  it("keeps the same validation: --remote with --embedded is a usage error in every position", async () => {
    const message = "The following error occurred: --remote=http://127.0.0.1:1 cannot also be provided when using --embedded";
    for (const args of [
      ["--remote", "http://127.0.0.1:1", "--embedded", "session", "list"],
      ["--embedded", "session", "list", "--remote", "http://127.0.0.1:1"],
      ["--remote", "http://127.0.0.1:1", "session", "list", "--embedded"],
      ["--embedded", "--remote", "http://127.0.0.1:1", "run", "hello"],
    ]) {
      expectUsageError(await cli(args), message);
    }
  });

  it("a connection flag with no command after it is a usage error", async () => {
    expectUsageError(await cli(["--embedded"]));
    expectUsageError(await cli(["--database", ":memory:"]));
  });
});

describe("unknown commands", () => {
  it.each([
    [["frobnicate"], "command frobnicate not found"],
    [["session", "frob"], "command session frob not found"],
    [["--embedded", "frobnicate", "--all"], "command frobnicate not found"],
    [["turn", "config", "show"], "command turn config not found"],
  ])("%j prints one `error:` line, exit 2", async (args, message) => {
    expectUsageError(await cli(args), message);
  });
});

describe("what could not be reached is named", () => {
  it("--remote to a closed port: a TransportError naming the URL and the cause", async () => {
    const port = await closedPort();
    for (const args of [["--remote", `http://127.0.0.1:${port}`, "session", "list"], ["session", "show", "550e8400-e29b-41d4-a716-446655440000", "--remote", `http://127.0.0.1:${port}/`]]) {
      const result = await cli(args);
      expect(result).toMatchObject({ code: 1, stdout: "", stderr: `error: TransportError: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n` });
    }
    // fetch itself refuses ports such as 1 (tcpmux): the cause says so.
    expect(await cli(["--remote", "http://127.0.0.1:1", "session", "list"])).toMatchObject({ code: 1, stdout: "", stderr: "error: TransportError: cannot reach http://127.0.0.1:1: bad port\n" });
  });

  it("--database naming an unreachable libSQL server: one StorageUnreachable line naming it, exit 1", async () => {
    const result = await cli(["session", "list", "--database", "http://127.0.0.1:1"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: StorageUnreachable: [^\n]*http:\/\/127\.0\.0\.1:1[^\n]*\n$/);
  });

  it("--database naming a file that is not a database: one StorageNotADatabase line naming the file, exit 1", async () => {
    const file = join(home.dir, "notes.txt");
    writeFileSync(file, "these are notes, not a database\n".repeat(200));
    const result = await cli(["--database", file, "session", "list"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(new RegExp(`^error: StorageNotADatabase: [^\\n]*${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}[^\\n]*\\n$`));
  });
  it("--database under a directory that refuses children (/proc): one error line naming it, exit 1 (it hung: Node's recursive mkdir)", async () => {
    const result = await cli(["--database", "/proc/ze-harness-no-such/y.db", "session", "list"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: [^\n]*ENOENT[^\n]*\/proc\/ze-harness-no-such[^\n]*\n$/);
  });

  it("--database below a regular file: one ENOTDIR error line, exit 1, the file untouched", async () => {
    const file = join(home.dir, "plain-file");
    writeFileSync(file, "plain");
    const result = await cli(["--database", join(file, "x.db"), "session", "list"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: [^\n]*ENOTDIR[^\n]*\n$/);
    expect(readFileSync(file, "utf8")).toBe("plain");
  });
});

describe("exit", () => {
  it("comes as soon as the output is written, even with a timer keeping the event loop alive", async () => {
    // A preloaded module holding a referenced interval: a process that waits for its event loop
    // to drain never exits, and the test times out.
    const keepAlive = join(home.dir, "keep-alive.cjs");
    writeFileSync(keepAlive, "setInterval(() => {}, 60_000);\n");
    const env = { ...home.env, NODE_OPTIONS: `--require ${keepAlive}` };
    const listed = await runCli(["session", "list", "--embedded", "--database", ":memory:"], { env, cwd: home.root });
    expect(listed).toMatchObject({ code: 0, stderr: "", stdout: "[]\n" });
    const failed = await runCli(["session", "show", "550e8400-e29b-41d4-a716-446655440000", "--embedded", "--database", ":memory:"], { env, cwd: home.root });
    expect(failed).toMatchObject({ code: 1, stdout: "" });
    expect(failed.stderr).toMatch(/^error: NotFoundError: /);
  });
});
