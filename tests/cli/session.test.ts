// `session …` commands through the built binary, embedded (in-process harness on the
// default database in the temp XDG data home), plus exit codes and one-line errors.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Session, SessionConfiguration } from "../../clients/index.js";
import { assertBuilt, jsonOf, embedded, runCli, type CliOptions, type CliResult } from "../support/cli.js";
import { gitRepository } from "../support/git.js";
import { tempHome, type TempHome } from "../support/harness.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let home: TempHome;
let options: CliOptions;

beforeAll(() => {
  assertBuilt();
  home = tempHome("ze-cli-session-");
  options = { env: home.env, cwd: home.root };
});
afterAll(() => home.cleanup());

// Every command here runs embedded (embedded() adds --embedded unless a case chooses its connection).
const cli = (args: readonly string[], overrides: Partial<CliOptions> = {}): Promise<CliResult> => runCli(embedded(args), { ...options, ...overrides });

/** Runs a command that must succeed and returns its JSON. */
async function ok<T>(args: readonly string[], overrides: Partial<CliOptions> = {}): Promise<T> {
  const result = await cli(args, overrides);
  expect(result.stderr, `stderr of ${args.join(" ")}`).toBe("");
  expect(result.code, `exit code of ${args.join(" ")}`).toBe(0);
  return jsonOf<T>(result);
}

/** An API failure: exit 1, empty stdout, exactly one stderr line `error: TAG: …`. */
function expectApiError(result: CliResult, tag: string): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(new RegExp(`^error: ${tag}: [^\\n]+\\n$`));
  expect(result.code).toBe(1);
}

/** A usage error: exit 2, empty stdout, exactly one stderr line `error: …`. */
function expectUsageError(result: CliResult, pattern?: RegExp): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
  if (pattern) expect(result.stderr).toMatch(pattern);
  expect(result.code).toBe(2);
}

const missing = "00000000-0000-4000-8000-000000000000";

describe("session create", () => {
  it("prints the Session as JSON: workdir is the absolute cwd, project `global`", async () => {
    const session = await ok<Session>(["session", "create"]);
    expect(session).toMatchObject({ workdir: home.root, projectId: "global", nextSequence: 1, configuration: { revision: 1, permissions: [] } });
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.defaultModel).toBeUndefined();
    expect(session.systemPrompt).toBeUndefined();
  });

  it("--model and --system-prompt are stored on the Session", async () => {
    const session = await ok<Session>(["session", "create", "--model", "openai/gpt-5", "--system-prompt", "Be terse."]);
    expect(session).toMatchObject({ defaultModel: "openai/gpt-5", systemPrompt: "Be terse." });
    expect(await ok<Session>(["session", "show", session.id])).toEqual(session);
  });

  it("--session ID creates that id; repeating the same create is idempotent (same JSON)", async () => {
    const id = randomUUID();
    const args = ["session", "create", "--session", id, "--model", "openai/gpt-5"];
    const first = await cli(args);
    const second = await cli(args);
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf<Session>(first).id).toBe(id);
    expect(second).toEqual(first);
  });

  it("--session takes an upper-case UUID in canonical form, so `show` finds it by either spelling", async () => {
    const id = randomUUID();
    const created = await ok<Session>(["session", "create", "--session", id.toUpperCase()]);
    expect(created.id).toBe(id);
    expect(await ok<Session>(["session", "show", id.toUpperCase()])).toEqual(created);
  });

  it("--workdir: relative resolves against the cwd, absolute is taken as is", async () => {
    mkdirSync(join(home.root, "sub", "deeper"), { recursive: true });
    const relative = await ok<Session>(["session", "create", "--workdir", "sub"]);
    expect(relative.workdir).toBe(join(home.root, "sub"));
    const absolute = await ok<Session>(["session", "create", "--workdir", join(home.root, "sub", "deeper")]);
    expect(absolute.workdir).toBe(join(home.root, "sub", "deeper"));
    const fromSubdirectory = await ok<Session>(["session", "create"], { cwd: join(home.root, "sub") });
    expect(fromSubdirectory.workdir).toBe(join(home.root, "sub"));
  });

  it("a workdir that does not exist is a ValidationError", async () => {
    expectApiError(await cli(["session", "create", "--workdir", join(home.dir, "nowhere")]), "ValidationError");
  });

  it("an invalid --session is a usage error naming the value", async () => {
    expectUsageError(await cli(["session", "create", "--session", "nope"]), /"nope" is not a Session id/);
  });
});

describe("session list", () => {
  let listHome: TempHome;
  let repo: string;
  const listOptions = (): CliOptions => ({ env: listHome.env, cwd: listHome.root });

  beforeAll(() => {
    listHome = tempHome("ze-cli-list-");
    repo = gitRepository(join(listHome.root, "repo"), listHome.env, "git@github.com:example/widgets.git");
    mkdirSync(join(repo, "src"));
  });
  afterAll(() => listHome.cleanup());

  it("shows the current project's Sessions oldest first; --all shows every project", async () => {
    const create = (cwd: string): Promise<Session> => ok<Session>(["session", "create"], { ...listOptions(), cwd });
    expect(await ok<Session[]>(["session", "list"], listOptions())).toEqual([]);

    const a = await create(listHome.root);
    const b = await create(repo);
    const c = await create(listHome.root);
    const d = await create(join(repo, "src"));
    expect(a.projectId).toBe("global");
    expect(b.projectId).toMatch(/^[0-9a-f]{40}$/);
    expect(d.projectId).toBe(b.projectId);

    const global = await ok<Session[]>(["session", "list"], listOptions());
    expect(global.map((session) => session.id)).toEqual([a.id, c.id]);
    expect(global[0]).toEqual(a);

    const project = await ok<Session[]>(["session", "list"], { ...listOptions(), cwd: join(repo, "src") });
    expect(project.map((session) => session.id)).toEqual([b.id, d.id]);

    const all = await ok<Session[]>(["session", "list", "--all"], listOptions());
    expect(all.map((session) => session.id)).toEqual([a.id, b.id, c.id, d.id]);

    const named = await ok<Session[]>(["session", "list", "--project", b.projectId], listOptions());
    expect(named.map((session) => session.id)).toEqual([b.id, d.id]);
  });

  it("--all with --project is a usage error", async () => {
    expectUsageError(await cli(["session", "list", "--all", "--project", "global"], listOptions()), /--project/);
  });
});

describe("session show, title, children, delete", () => {
  let session: Session;
  beforeAll(async () => {
    session = await ok<Session>(["session", "create"]);
  });

  it("show prints the Session", async () => {
    expect(await ok<Session>(["session", "show", session.id])).toEqual(session);
  });

  it("title sets the title and prints the Session", async () => {
    const titled = await ok<Session>(["session", "title", session.id, "Refactor the parser"]);
    expect(titled).toMatchObject({ id: session.id, title: "Refactor the parser" });
    expect((await ok<Session>(["session", "show", session.id])).title).toBe("Refactor the parser");
  });

  it("a title over 100 characters is a ValidationError", async () => {
    expectApiError(await cli(["session", "title", session.id, "x".repeat(101)]), "ValidationError");
  });

  it("children of a fresh Session is an empty list", async () => {
    expect(await ok<Session[]>(["session", "children", session.id])).toEqual([]);
  });

  it("delete prints the receipt; the id then is gone and stays retired", async () => {
    const doomed = await ok<Session>(["session", "create"]);
    expect(await ok<{ sessionId: string }>(["session", "delete", doomed.id, "--reason", "done"])).toEqual({ sessionId: doomed.id });
    expectApiError(await cli(["session", "show", doomed.id]), "NotFoundError");
    expectApiError(await cli(["session", "create", "--session", doomed.id]), "ConflictError");
    const listed = await ok<Session[]>(["session", "list"]);
    expect(listed.map((entry) => entry.id)).not.toContain(doomed.id);
  });
});

describe("session config", () => {
  let session: Session;
  const rules = { permissions: [{ action: "read", resource: "*", effect: "allow" }], approval: {} };
  beforeAll(async () => {
    session = await ok<Session>(["session", "create"]);
  });

  it("show prints revision 1 of a new Session", async () => {
    expect(await ok<SessionConfiguration>(["session", "config", "show", session.id])).toEqual({ revision: 1, permissions: [], approval: {} });
  });

  it("replace with `-` reads stdin and prints the next revision", async () => {
    const replaced = await ok<SessionConfiguration>(["session", "config", "replace", session.id, "1", "-"], { input: JSON.stringify(rules) });
    expect(replaced).toEqual({ revision: 2, ...rules });
    expect(await ok<SessionConfiguration>(["session", "config", "show", session.id])).toEqual(replaced);
  });

  it("replace with an inline argument", async () => {
    const replaced = await ok<SessionConfiguration>(["session", "config", "replace", session.id, "2", JSON.stringify({ permissions: [], approval: {} })]);
    expect(replaced).toEqual({ revision: 3, permissions: [], approval: {} });
  });

  it("a stale revision is a ConflictError and changes nothing", async () => {
    const result = await cli(["session", "config", "replace", session.id, "1", "-"], { input: JSON.stringify(rules) });
    expectApiError(result, "ConflictError");
    expect((await ok<SessionConfiguration>(["session", "config", "show", session.id])).revision).toBe(3);
  });

  it("a configuration missing a field is a ValidationError", async () => {
    expectApiError(await cli(["session", "config", "replace", session.id, "3", '{"permissions":[]}']), "ValidationError");
  });

  it.each([
    [["not json"], /not valid JSON/],
    [["[]"], /must be a JSON object/],
  ])("CONFIGURATION %j is a usage error", async ([configuration], pattern) => {
    expectUsageError(await cli(["session", "config", "replace", session.id, "3", configuration!]), pattern);
  });

  it.each(["0", "x"])("EXPECTED_REVISION %j is a usage error", async (revision) => {
    expectUsageError(await cli(["session", "config", "replace", session.id, revision, "{}"]));
  });
});

describe("errors", () => {
  it.each([
    ["show", ["session", "show", missing]],
    ["title", ["session", "title", missing, "t"]],
    ["children", ["session", "children", missing]],
    ["config show", ["session", "config", "show", missing]],
    ["config replace", ["session", "config", "replace", missing, "1", '{"permissions":[],"approval":{}}']],
  ])("unknown Session (%s): exit 1, one `error: NotFoundError:` line, empty stdout", async (_name, args) => {
    const result = await cli(args);
    expectApiError(result, "NotFoundError");
    expect(result.stderr).toContain(missing);
  });

  it.each([["show"], ["children"], ["delete"], ["config", "show"]])("an invalid UUID (session %s) is one clear usage-error line", async (...command) => {
    expectUsageError(await cli(["session", ...command, "not-a-uuid"]), /^error: "not-a-uuid" is not a Session id \(a UUID, or a unique prefix of 8 or more hex digits\)\n$/);
  });

  it.each([
    [["session", "show"], /Missing 1 required arg: sessionId/i],
    [["session", "show", missing, "extra"], /Unexpected argument: extra/],
    [["session", "create", "--bogus"], /Nonexistent flag: --bogus/],
    [["session", "list", "--embedded", "--remote", "http://127.0.0.1:9"], /--remote/],
  ])("%j is a usage error (exit 2, one line)", async (args, pattern) => {
    expectUsageError(await cli(args), pattern);
  });
});

describe("databases", () => {
  let dbHome: TempHome;
  const dataDir = (): string => join(dbHome.env["XDG_DATA_HOME"]!, "ze-harness");
  const dbOptions = (env: Record<string, string> = {}): Partial<CliOptions> => ({ env: { ...dbHome.env, ...env }, cwd: dbHome.root });

  beforeAll(() => {
    dbHome = tempHome("ze-cli-db-");
  });
  afterAll(() => dbHome.cleanup());

  it("--database :memory: works and leaves no file behind", async () => {
    const session = await ok<Session>(["session", "create", "--database", ":memory:"], dbOptions());
    expect(session.workdir).toBe(dbHome.root);
    expect(await ok<Session[]>(["session", "list", "--database", ":memory:"], dbOptions())).toEqual([]);
    expect(existsSync(join(dataDir(), "ze-harness.db"))).toBe(false);
    expect(readdirSync(dbHome.root)).toEqual([]);
  });

  it("--database rel.db lands under $XDG_DATA_HOME/ze-harness/, not in the cwd", async () => {
    const session = await ok<Session>(["session", "create", "--database", "rel.db"], dbOptions());
    expect(existsSync(join(dataDir(), "rel.db"))).toBe(true);
    expect(readdirSync(dbHome.root)).toEqual([]);
    expect(await ok<Session[]>(["session", "list", "--database", "rel.db"], dbOptions())).toEqual([session]);
    expect(await ok<Session[]>(["session", "list"], dbOptions())).toEqual([]);
  });

  it("ZE_HARNESS_DB=env.db likewise; --database wins over it", async () => {
    const session = await ok<Session>(["session", "create"], dbOptions({ ZE_HARNESS_DB: "env.db" }));
    expect(existsSync(join(dataDir(), "env.db"))).toBe(true);
    expect(await ok<Session[]>(["session", "list", "--database", "env.db"], dbOptions())).toEqual([session]);
    const viaRel = await ok<Session[]>(["session", "list", "--database", "rel.db"], dbOptions({ ZE_HARNESS_DB: "env.db" }));
    expect(viaRel.map((entry) => entry.id)).not.toContain(session.id);
  });

  it("the default database is $XDG_DATA_HOME/ze-harness/ze-harness.db", async () => {
    const session = await ok<Session>(["session", "create"], dbOptions());
    expect(existsSync(join(dataDir(), "ze-harness.db"))).toBe(true);
    expect(await ok<Session[]>(["session", "list", "--embedded"], dbOptions())).toEqual([session]);
  });
});
