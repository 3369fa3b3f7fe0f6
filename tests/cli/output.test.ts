// What the CLI prints, through the built binary: a closed stdout (`run … | head -2`) ends
// quietly with exit 0; workspace paths carry their text beside the exact bytes; `--format
// table` prints readable columns while JSON stays the default; `run` sends the TUI's author id.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { watchTurn, type GitStatus, type SessionTurnsResponse, type WorkspaceListPage } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, scriptByPrompt, succeeded, type CliOptions, type CliResult } from "../support/cli.js";
import { binPath, networkClient, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;
let project: string;
let sessionId: string;
let plainSessionId: string;
const ODD_NAME = Buffer.from([0x6e, 0xff, 0x2e, 0x62, 0x69, 0x6e]);

const cli = (args: readonly string[], overrides: Partial<CliOptions> = {}) => runCli(["--embedded", ...args], { ...options, ...overrides });

/** `ze-harness ARGS | head -2` in bash: head's output, and the CLI's stderr and exit status. */
function pipedToHead(args: readonly string[]): Promise<CliResult> {
  const quote = (value: string): string => `'${value.replace(/'/g, "'\\''")}'`;
  const command = `${[process.execPath, binPath, ...args].map(quote).join(" ")} | head -2; echo "exit=\${PIPESTATUS[0]}" >&2`;
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", ["-c", command], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
}

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-output-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
  // A git repository with one committed and one new file, and a name that is not UTF-8.
  project = join(home.root, "project");
  mkdirSync(project);
  const git = (...args: string[]) => spawnSync("git", args, { cwd: project, env: { ...home.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" } });
  git("init", "-q", "-b", "main");
  writeFileSync(join(project, "old.txt"), "old\n");
  git("add", "old.txt");
  git("commit", "-qm", "first");
  writeFileSync(join(project, "new.txt"), "new\n");
  sessionId = (await succeeded<{ id: string }>(cli(["session", "create"], { cwd: project }))).id;
  // Outside a repository (git observation refuses names that are not UTF-8): such a name beside new.txt.
  const plain = join(home.root, "plain");
  mkdirSync(plain);
  writeFileSync(join(plain, "new.txt"), "new\n");
  writeFileSync(Buffer.concat([Buffer.from(`${plain}/`), ODD_NAME]), "bytes\n");
  plainSessionId = (await succeeded<{ id: string }>(cli(["session", "create"], { cwd: plain }))).id;
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

describe("a closed stdout", () => {
  it("embedded `run … | head -2`: the first two lines, no EPIPE, exit 0, and the Turn still completes", async () => {
    script("Many lines", { events: [{ type: "text", text: "one\ntwo\nthree\n" }, { type: "delay", ms: 300 }, { type: "text", text: "four\n".repeat(15_000) }] });
    const result = await pipedToHead(["--embedded", "run", "--session", sessionId, "Many lines"]);
    expect(result.stdout).toBe("one\ntwo\n");
    expect(result.stderr).toBe("exit=0\n");
    const page = await succeeded<SessionTurnsResponse>(cli(["turn", "list", sessionId]));
    expect(page.turns.at(-1)!.turn.outcome?.kind).toBe("completed");
  });

  describe("through a server", () => {
    const token = "cli-output-token";
    let serve: ServeProcess;
    beforeAll(async () => {
      serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
    });
    afterAll(async () => {
      await serve?.stop();
    });

    it("terminal output adds the text of UTF-8 bytes beside dataBase64", async () => {
      const remote = ["--remote", serve.url, "--token", token];
      const created = await succeeded<{ id: string }>(runCli(["session", "create", ...remote], options));
      const terminal = await succeeded<{ terminalId: string }>(runCli(["terminal", "open", created.id, "--exec", "printf 'h\\303\\251llo\\n'", ...remote], options));
      // Read pages until the process exited and the page reached the end (each read is a full CLI run).
      let page: { complete: boolean; events: { type: string; dataBase64?: string; text?: string }[] } = { complete: false, events: [] };
      const events: (typeof page)["events"] = [];
      let after = 0;
      for (let reads = 0; !page.complete && reads < 40; reads++) {
        page = await succeeded(runCli(["terminal", "output", created.id, terminal.terminalId, "--after", String(after), ...remote], options));
        events.push(...page.events);
        after = (page as unknown as { next: number }).next;
      }
      const data = events.filter((event) => event.type === "terminal.data");
      expect(data.length).toBeGreaterThan(0);
      for (const event of data) expect(event.text).toBe(Buffer.from(event.dataBase64!, "base64").toString("utf8"));
      expect(data.map((event) => event.text).join("")).toContain("héllo");
    });

    it("`run --remote … | head -2` exits 0 at once and the Turn keeps running on the server", async () => {
      script("Remote lines", { events: [{ type: "text", text: "one\ntwo\nthree\n" }, { type: "delay", ms: 300 }, { type: "text", text: "four\n".repeat(15_000) }, { type: "delay", ms: 1000 }, { type: "text", text: "end\n" }] });
      const remote = ["--remote", serve.url, "--token", token];
      const created = await succeeded<{ id: string }>(runCli(["session", "create", ...remote], options));
      const result = await pipedToHead([...remote, "run", "--session", created.id, "Remote lines"]);
      expect(result.stdout).toBe("one\ntwo\n");
      expect(result.stderr).toBe("exit=0\n");
      const page = await succeeded<SessionTurnsResponse>(runCli(["turn", "list", created.id, ...remote], options));
      const turnId = page.turns.at(-1)!.turn.id;
      // The client left; the server runs the Turn to its end (not cancelled).
      const finished = await watchTurn(networkClient(serve.url, token), { server: "local", sessionId: created.id, turnId });
      expect(finished.outcome?.kind).toBe("completed");
      expect(finished.parts.some((part) => part.type === "text" && part.text.endsWith("end\n"))).toBe(true);
    });
  });
});

describe("paths", () => {
  it("git status keeps bytesBase64 and adds the path text beside it", async () => {
    const status = await succeeded<GitStatus>(cli(["git", "status", sessionId]));
    expect(status.untracked).toEqual([{ path: { bytesBase64: Buffer.from("new.txt").toString("base64"), path: "new.txt" } }]);
  });

  it("files list adds the path text; --format table shows it (and base64: for other bytes)", async () => {
    const page = await succeeded<WorkspaceListPage>(cli(["files", "list", plainSessionId]));
    expect(page.entries.map((entry) => entry.path)).toEqual(
      expect.arrayContaining([
        { bytesBase64: Buffer.from("new.txt").toString("base64"), path: "new.txt" },
        // Not UTF-8: the exact bytes only.
        { bytesBase64: ODD_NAME.toString("base64") },
      ]),
    );
    const table = await cli(["files", "list", plainSessionId, "--format", "table"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^KIND +SIZE +MODIFIED +PATH\n/);
    expect(table.stdout).toMatch(/\nfile +4 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +new\.txt\n/);
    expect(table.stdout).toContain(`base64:${ODD_NAME.toString("base64")}`);
  });

  it("git status --format table lists area, change and path text", async () => {
    const table = await cli(["git", "status", sessionId, "--format", "table"]);
    expect(table.stdout).toMatch(/^On branch main \([0-9a-f]{12}\)\nAREA +CHANGE +PATH\n/);
    expect(table.stdout).toMatch(/\nuntracked +new\.txt\n/);
  });
});

describe("--format table", () => {
  it("session list, turn list, provider list and runtime models print columns; JSON stays the default", async () => {
    const sessions = await cli(["session", "list", "--all", "--format", "table"]);
    expect(sessions.stdout).toMatch(/^ID +TITLE +MODEL +UPDATED +WORKDIR\n/);
    expect(sessions.stdout).toContain(sessionId.slice(0, 8));
    expect(Array.isArray(JSON.parse((await cli(["session", "list", "--all"])).stdout))).toBe(true);

    const turns = await cli(["turn", "list", sessionId, "--format", "table"]);
    expect(turns.stdout).toMatch(/^SEQ +ID +PHASE +OUTCOME +MODEL +PROMPT\n1 +[0-9a-f]{8} +\S+ +completed +test\/scripted +Many lines\n/);

    const providers = await cli(["provider", "list", "--format", "table"]);
    expect(providers.stdout).toMatch(/^ID +NAME +AVAILABILITY +SOURCE\n/);
    expect(providers.stdout).toMatch(/\ntest +Scripted test model +available +\S+\n/);

    const models = await cli(["runtime", "models", "--format", "table"]);
    expect(models.stdout).toMatch(/^MODEL +NAME +AVAILABILITY +DEFAULT\n/);
    expect(models.stdout).toMatch(/\ntest\/scripted +Scripted +available +\*\n/);
  });

  it("rejects another format as a usage error", async () => {
    const result = await cli(["session", "list", "--format", "yaml"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: .*yaml/);
  });
});

describe("authorship", () => {
  it("run sends this machine's author id (the TUI's author-id file), so the TUI shows `you`", async () => {
    script("Who wrote this", { events: [{ type: "text", text: "You did." }] });
    expect((await cli(["run", "--session", sessionId, "Who wrote this"])).code).toBe(0);
    const authorId = readFileSync(join(home.env["XDG_DATA_HOME"]!, "ze-harness", "author-id"), "utf8").trim();
    expect(authorId).toMatch(/^[0-9a-f-]{36}$/);
    const page = await succeeded<SessionTurnsResponse>(cli(["turn", "list", sessionId]));
    expect(page.turns.at(-1)!.turn.attribution?.authorId).toBe(authorId);
  });

  it("chat sends the same author id", async () => {
    script("Chat author", { events: [{ type: "text", text: "Yes." }] });
    const result = await cli(["chat", sessionId], { input: "Chat author\n" });
    expect(result.code).toBe(0);
    const authorId = readFileSync(join(home.env["XDG_DATA_HOME"]!, "ze-harness", "author-id"), "utf8").trim();
    const page = await succeeded<SessionTurnsResponse>(cli(["turn", "list", sessionId]));
    expect(page.turns.at(-1)!.turn.attribution?.authorId).toBe(authorId);
  });
});
