// The Sessions API through the generated client, every response checked against
// generated/openapi.json (tests/support/contract.ts). What only the API drives runs on the Node host
// and on the Worker host in workerd (tests/support/hosts.ts), each test on a fresh empty server;
// what needs the disk (workdirs, git projects) or the store runs against the in-process harness.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sdk, type CreateSessionRequest, type PermissionRule, type Session, type ZeClient } from "../../clients/index.js";
import { insertSavedPermission } from "../../services/storage/index.js";
import { clockPast, failure, ok } from "../support/calls.js";
import { gitRepository } from "../support/git.js";
import { repoRoot, startHarness, type TestHarness } from "../support/harness.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";

/** The server the current test addresses: `local`, or the fresh one a host test gets. */
let server = "local";
const packageVersion = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;

/** The in-process harness of a Node-only test. */
let t: TestHarness;
/** What the current test calls: a host's fresh server, or the in-process harness. */
let target: { readonly api: ZeClient; readonly fetch: (request: Request) => Promise<Response> };

const client = () => target.api.client;

async function create(body: CreateSessionRequest = {}, sessionId: string = randomUUID()): Promise<Session> {
  return (await ok(sdk.createSession({ client: client(), path: { server, sessionId }, body }))).session;
}
const createCall = (sessionId: string, body: CreateSessionRequest) => sdk.createSession({ client: client(), path: { server, sessionId }, body });
const get = async (sessionId: string): Promise<Session> => (await ok(sdk.getSession({ client: client(), path: { server, sessionId } }))).session;
const getCall = (sessionId: string) => sdk.getSession({ client: client(), path: { server, sessionId } });
const list = async (projectId?: string): Promise<Session[]> =>
  (await ok(sdk.listSessions({ client: client(), path: { server }, ...(projectId !== undefined ? { query: { projectId } } : {}) }))).sessions;

/** A directory under the temp home (outside the server root unless `under` says otherwise). */
function directory(...parts: string[]): string {
  const dir = join(t.home.dir, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const NOT_FOUND_SESSION = { status: 404, body: { _tag: "NotFoundError", resource: "session" } };
const VALIDATION = { status: 400, body: { _tag: "ValidationError" } };
const CONFLICT = { status: 409, body: { _tag: "ConflictError" } };

describe.each(HOSTS)("on the %s host", (kind) => {
  let host: ModelHost;
  let fresh: ModelHost | undefined;
  beforeAll(async () => {
    host = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });
  // Every test on an empty server of its own: on Node a new host, on the Worker a new server name (its own object).
  beforeEach(async () => {
    fresh = await host.otherServer();
    target = fresh;
    server = fresh.server;
  });
  afterEach(async () => {
    await fresh?.close();
    fresh = undefined;
    server = "local";
  });

  describe("system", () => {
    it("health answers ok", async () => {
      expect(await ok(sdk.health({ client: client() }))).toEqual({ status: "ok" });
    });

    it("capabilities report protocol 2 (nested agent ids), this package's version and background sub-agents", async () => {
      expect(await ok(sdk.capabilities({ client: client() }))).toEqual({
        backgroundSubagents: true,
        protocolVersion: 2,
        harnessVersion: packageVersion,
      });
    });
  });

  describe("createSession", () => {
    it("creates a Session in the server root by default, with revision-1 empty configuration", async () => {
      const id = randomUUID();
      const session = await create({}, id);
      expect(session).toMatchObject({
        id,
        workdir: ".",
        projectId: "global",
        configuration: { revision: 1, permissions: [], approval: {} },
        nextSequence: 1,
      });
      expect(session.updatedAt).toBe(session.createdAt);
      expect(session.title).toBeUndefined();
      expect(await get(id)).toEqual(session);
    });

    it("stores the creation options it was given", async () => {
      const permissions: PermissionRule[] = [{ action: "shell", resource: "*", effect: "ask" }];
      const session = await create({
        defaultModel: "openai/gpt-5",
        systemPrompt: "Be brief.",
        permissions,
        approval: { timeoutMs: { kind: "finite", value: 60_000 } },
      });
      expect(session).toMatchObject({
        defaultModel: "openai/gpt-5",
        systemPrompt: "Be brief.",
        configuration: { revision: 1, permissions, approval: { timeoutMs: { kind: "finite", value: 60_000 } } },
      });
      expect(await get(session.id)).toEqual(session);
    });

    it("replays the same body to the same Session, createdAt included", async () => {
      const id = randomUUID();
      const body: CreateSessionRequest = { defaultModel: "test/m", permissions: [{ action: "read", resource: "*", effect: "allow" }] };
      const first = await create(body, id);
      clockPast(first.createdAt);
      const replay = await create({ permissions: [{ effect: "allow", resource: "*", action: "read" }], defaultModel: "test/m" }, id);
      expect(replay).toEqual(first);
      expect(await list()).toEqual([first]);
    });

    it("answers a different body for an existing id with 409 ConflictError and keeps the original", async () => {
      const id = randomUUID();
      const first = await create({ defaultModel: "test/a" }, id);
      expect(await failure(createCall(id, { defaultModel: "test/b" }))).toMatchObject(CONFLICT);
      expect(await failure(createCall(id, {}))).toMatchObject(CONFLICT);
      expect(await get(id)).toEqual(first);
    });

    it("keeps a deleted id retired: creating it again is 409 with the same or another body", async () => {
      const id = randomUUID();
      await create({}, id);
      await ok(sdk.deleteSession({ client: client(), path: { server, sessionId: id } }));
      expect(await failure(createCall(id, {}))).toMatchObject(CONFLICT);
      expect(await failure(createCall(id, { defaultModel: "test/other" }))).toMatchObject(CONFLICT);
      expect(await failure(getCall(id))).toMatchObject(NOT_FOUND_SESSION);
      expect(await list()).toEqual([]);
    });
  });

  describe("getSession", () => {
    it("answers 404 NotFoundError resource 'session' for an unknown id", async () => {
      const error = await failure(getCall(randomUUID()));
      expect(error).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("listSessions", () => {
    it("is empty on a fresh server", async () => {
      expect(await list()).toEqual([]);
    });

    it("lists oldest first, not in id order", async () => {
      // Ids in descending lexical order, so an id sort would reverse the result.
      const ids = ["ffffffff-0000-4000-8000-000000000000", "88888888-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000"];
      const created: Session[] = [];
      for (const id of ids) {
        const previous = created.at(-1);
        if (previous) clockPast(previous.createdAt);
        created.push(await create({}, id));
      }
      expect((await list()).map((session) => session.id)).toEqual(ids);
    });
  });

  describe("deleteSession", () => {
    it("deletes, then a replay answers 200 with the same body, and get answers 404", async () => {
      const keep = await create();
      const { id } = await create();
      const first = await ok(sdk.deleteSession({ client: client(), path: { server, sessionId: id } }));
      expect(first).toEqual({ deleted: { sessionId: id } });
      const replay = await ok(sdk.deleteSession({ client: client(), path: { server, sessionId: id }, body: { reason: "again" } }));
      expect(replay).toEqual(first);
      expect(await failure(getCall(id))).toMatchObject(NOT_FOUND_SESSION);
      expect(await list()).toEqual([keep]);
    });

    it("answers 404 resource 'session' for an id that never existed", async () => {
      expect(await failure(sdk.deleteSession({ client: client(), path: { server, sessionId: randomUUID() } }))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("setSessionTitle", () => {
    const setTitle = (sessionId: string, title: string) => sdk.setSessionTitle({ client: client(), path: { server, sessionId }, body: { title } });

    it("sets a new title and moves updatedAt", async () => {
      const created = await create();
      clockPast(created.updatedAt);
      const { session } = await ok(setTitle(created.id, "Refactor the parser"));
      expect(session.title).toBe("Refactor the parser");
      expect(session.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(session.createdAt).toBe(created.createdAt);
      expect(await get(created.id)).toEqual(session);
    });

    it("treats the same title as a no-op that keeps updatedAt", async () => {
      const created = await create();
      const { session: titled } = await ok(setTitle(created.id, "Same"));
      clockPast(titled.updatedAt);
      const { session: again } = await ok(setTitle(created.id, "Same"));
      expect(again).toEqual(titled);
      expect(await get(created.id)).toEqual(titled);
    });

    it("accepts 100 characters and rejects 101 with 400, leaving the title unchanged", async () => {
      const created = await create();
      const { session } = await ok(setTitle(created.id, "t".repeat(100)));
      expect(session.title).toHaveLength(100);
      expect(await failure(setTitle(created.id, "u".repeat(101)))).toMatchObject(VALIDATION);
      expect(await get(created.id)).toEqual(session);
    });

    it("answers 404 for an unknown Session", async () => {
      expect(await failure(setTitle(randomUUID(), "x"))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("setSessionDefaultModel", () => {
    const setModel = (sessionId: string, defaultModel: string) =>
      sdk.setSessionDefaultModel({ client: client(), path: { server, sessionId }, body: { defaultModel } });

    it("sets a new default model and moves updatedAt", async () => {
      const created = await create({ defaultModel: "openai/gpt-5" });
      clockPast(created.updatedAt);
      const { session } = await ok(setModel(created.id, "anthropic/claude-sonnet-4-5"));
      expect(session.defaultModel).toBe("anthropic/claude-sonnet-4-5");
      expect(session.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(await get(created.id)).toEqual(session);
    });

    it("treats the same model as a no-op that keeps updatedAt", async () => {
      const created = await create({ defaultModel: "openai/gpt-5" });
      clockPast(created.updatedAt);
      const { session } = await ok(setModel(created.id, "openai/gpt-5"));
      expect(session).toEqual(created);
      expect(await get(created.id)).toEqual(created);
    });

    it("answers 404 for an unknown Session", async () => {
      expect(await failure(setModel(randomUUID(), "test/m"))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("Session configuration", () => {
    const getConfiguration = async (sessionId: string) =>
      (await ok(sdk.getSessionConfiguration({ client: client(), path: { server, sessionId } }))).configuration;
    const replace = (sessionId: string, expectedRevision: number, permissions: PermissionRule[]) =>
      sdk.replaceSessionConfiguration({
        client: client(),
        path: { server, sessionId },
        body: { expectedRevision, permissions, approval: { timeoutMs: { kind: "unlimited" } } },
      });

    it("starts at revision 1 with the creation rules", async () => {
      const permissions: PermissionRule[] = [{ action: "write", resource: "src/**", effect: "deny" }];
      const { id } = await create({ permissions });
      expect(await getConfiguration(id)).toEqual({ revision: 1, permissions, approval: {} });
    });

    it("replaces the rules at the expected revision and moves to revision 2", async () => {
      const { id } = await create();
      const rules: PermissionRule[] = [
        { action: "shell", resource: "git *", effect: "allow" },
        { action: "shell", resource: "*", effect: "ask" },
      ];
      const { configuration } = await ok(replace(id, 1, rules));
      const expected = { revision: 2, permissions: rules, approval: { timeoutMs: { kind: "unlimited" } } };
      expect(configuration).toEqual(expected);
      expect(await getConfiguration(id)).toEqual(expected);
      expect((await get(id)).configuration).toEqual(expected);
    });

    it("refuses a stale revision with 409 and changes nothing", async () => {
      const { id } = await create();
      await ok(replace(id, 1, [{ action: "read", resource: "*", effect: "allow" }]));
      const before = await get(id);
      expect(await failure(replace(id, 1, [{ action: "read", resource: "*", effect: "deny" }]))).toMatchObject(CONFLICT);
      expect(await failure(replace(id, 3, []))).toMatchObject(CONFLICT);
      expect(await get(id)).toEqual(before);
    });

    it("answers 404 for an unknown Session on get and replace", async () => {
      const id = randomUUID();
      expect(await failure(sdk.getSessionConfiguration({ client: client(), path: { server, sessionId: id } }))).toMatchObject(NOT_FOUND_SESSION);
      expect(await failure(replace(id, 1, []))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("children and background", () => {
    it("a new Session has no children", async () => {
      const { id } = await create();
      expect(await ok(sdk.listSessionChildren({ client: client(), path: { server, sessionId: id } }))).toEqual({ sessions: [] });
    });

    it("listing children of an unknown Session answers 404", async () => {
      expect(await failure(sdk.listSessionChildren({ client: client(), path: { server, sessionId: randomUUID() } }))).toMatchObject(NOT_FOUND_SESSION);
    });

    it("promoting to background reports nothing promoted", async () => {
      const { id } = await create();
      expect(await ok(sdk.promoteSessionBackground({ client: client(), path: { server, sessionId: id } }))).toEqual({ promoted: false });
    });

    it("promoting an unknown Session answers 404", async () => {
      expect(await failure(sdk.promoteSessionBackground({ client: client(), path: { server, sessionId: randomUUID() } }))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  describe("deleteServer", () => {
    it("deletes every Session of the server, and their ids stay retired", async () => {
      const a = await create();
      const b = await create();
      const { deleted } = await ok(sdk.deleteServer({ client: client(), path: { server } }));
      expect(deleted.server).toBe(server);
      expect([...deleted.sessionIds].sort()).toEqual([a.id, b.id].sort());
      expect(await list()).toEqual([]);
      expect(await failure(getCall(a.id))).toMatchObject(NOT_FOUND_SESSION);
      expect(await failure(createCall(a.id, {}))).toMatchObject(CONFLICT);
      expect(await failure(createCall(b.id, {}))).toMatchObject(CONFLICT);
    });

    it("on an empty server deletes nothing", async () => {
      expect(await ok(sdk.deleteServer({ client: client(), path: { server } }))).toEqual({ deleted: { server, sessionIds: [] } });
    });
  });

  describe("bad input is refused with 400 and changes nothing", () => {
    const bad = "not-a-uuid";
    // Deliberately ill-typed calls: the generated types would not allow them.
    const loose = <T>(value: unknown): T => value as T;

    let existing: Session;
    let before: Session[];
    beforeEach(async () => {
      existing = await create({ defaultModel: "test/m", permissions: [{ action: "read", resource: "*", effect: "allow" }] });
      await ok(sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: { title: "kept" } }));
      before = await list();
    });

    const cases: [string, string, () => Promise<{ data?: unknown; error?: unknown; response?: Response }>][] = [
      ["createSession: non-uuid id", "path.sessionId", () => createCall(bad, {})],
      ["createSession: missing body", "a JSON body is required", () => sdk.createSession({ client: client(), path: { server, sessionId: randomUUID() }, body: loose(undefined) })],
      ["createSession: workdir is a number", "body.workdir", () => createCall(randomUUID(), loose({ workdir: 5 }))],
      ["createSession: permissions is an object", "body.permissions", () => createCall(randomUUID(), loose({ permissions: { action: "read" } }))],
      ["createSession: unknown permission effect", "body.permissions.0.effect", () => createCall(randomUUID(), loose({ permissions: [{ action: "read", resource: "*", effect: "maybe" }] }))],
      ["createSession: approval timeout of 0", "body.approval.timeoutMs.value", () => createCall(randomUUID(), { approval: { timeoutMs: { kind: "finite", value: 0 } } })],
      ["createSession: body is an array", "body: ", () => createCall(randomUUID(), loose([]))],
      ["getSession: non-uuid id", "path.sessionId", () => getCall(bad)],
      ["deleteSession: non-uuid id", "path.sessionId", () => sdk.deleteSession({ client: client(), path: { server, sessionId: bad } })],
      ["deleteSession: reason is a number", "body.reason", () => sdk.deleteSession({ client: client(), path: { server, sessionId: existing.id }, body: loose({ reason: 5 }) })],
      ["setSessionTitle: non-uuid id", "path.sessionId", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: bad }, body: { title: "x" } })],
      ["setSessionTitle: missing body", "a JSON body is required", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: loose(undefined) })],
      ["setSessionTitle: title is a number", "body.title", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: loose({ title: 5 }) })],
      ["setSessionTitle: missing title", "body.title", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: loose({}) })],
      ["setSessionTitle: 101 characters", "body.title", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: { title: "x".repeat(101) } })],
      ["setSessionDefaultModel: non-uuid id", "path.sessionId", () => sdk.setSessionDefaultModel({ client: client(), path: { server, sessionId: bad }, body: { defaultModel: "test/x" } })],
      ["setSessionDefaultModel: missing body", "a JSON body is required", () => sdk.setSessionDefaultModel({ client: client(), path: { server, sessionId: existing.id }, body: loose(undefined) })],
      ["setSessionDefaultModel: defaultModel is an array", "body.defaultModel", () => sdk.setSessionDefaultModel({ client: client(), path: { server, sessionId: existing.id }, body: loose({ defaultModel: [] }) })],
      ["setSessionTitle: a title with a line break", "/title must be one line without control characters (found U+000A at index 3)", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: { title: "one\ntwo" } })],
      ["setSessionTitle: a title with a carriage return", "found U+000D", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: { title: "one\rtwo" } })],
      ["setSessionTitle: a title with a control character", "found U+0007", () => sdk.setSessionTitle({ client: client(), path: { server, sessionId: existing.id }, body: { title: "bell\u0007" } })],
      ["createSession: a defaultModel without a provider", "/defaultModel must be PROVIDER/MODEL", () => createCall(randomUUID(), { defaultModel: "gpt-5" })],
      ["createSession: a defaultModel with an empty model", "/defaultModel must be PROVIDER/MODEL", () => createCall(randomUUID(), { defaultModel: "openai/" })],
      ["setSessionDefaultModel: a model without a provider", "/defaultModel must be PROVIDER/MODEL", () => sdk.setSessionDefaultModel({ client: client(), path: { server, sessionId: existing.id }, body: { defaultModel: "gpt-5" } })],
      ["getSessionConfiguration: non-uuid id", "path.sessionId", () => sdk.getSessionConfiguration({ client: client(), path: { server, sessionId: bad } })],
      ["replaceSessionConfiguration: non-uuid id", "path.sessionId", () => sdk.replaceSessionConfiguration({ client: client(), path: { server, sessionId: bad }, body: { expectedRevision: 1, permissions: [], approval: {} } })],
      ["replaceSessionConfiguration: missing body", "a JSON body is required", () => sdk.replaceSessionConfiguration({ client: client(), path: { server, sessionId: existing.id }, body: loose(undefined) })],
      ["replaceSessionConfiguration: expectedRevision is a string", "body.expectedRevision", () => sdk.replaceSessionConfiguration({ client: client(), path: { server, sessionId: existing.id }, body: loose({ expectedRevision: "1", permissions: [], approval: {} }) })],
      ["replaceSessionConfiguration: expectedRevision 0", "body.expectedRevision", () => sdk.replaceSessionConfiguration({ client: client(), path: { server, sessionId: existing.id }, body: { expectedRevision: 0, permissions: [], approval: {} } })],
      ["replaceSessionConfiguration: permissions missing", "body.permissions", () => sdk.replaceSessionConfiguration({ client: client(), path: { server, sessionId: existing.id }, body: loose({ expectedRevision: 1, approval: {} }) })],
      ["listSessionChildren: non-uuid id", "path.sessionId", () => sdk.listSessionChildren({ client: client(), path: { server, sessionId: bad } })],
      ["promoteSessionBackground: non-uuid id", "path.sessionId", () => sdk.promoteSessionBackground({ client: client(), path: { server, sessionId: bad } })],
      ["listSavedPermissions: non-uuid id", "path.sessionId", () => sdk.listSavedPermissions({ client: client(), path: { server, sessionId: bad } })],
      ["removeSavedPermission: non-uuid session id", "path.sessionId", () => sdk.removeSavedPermission({ client: client(), path: { server, sessionId: bad, savedPermissionId: randomUUID() } })],
      ["removeSavedPermission: non-uuid grant id", "path.savedPermissionId", () => sdk.removeSavedPermission({ client: client(), path: { server, sessionId: existing.id, savedPermissionId: bad } })],
    ];

    // The generated client cannot repeat a query parameter, so these two go through the raw fetch.

    it.each(cases)("%s", async (_, reason, call) => {
      const error = await failure(call());
      expect(error).toMatchObject(VALIDATION);
      expect(error.body.message).toContain(reason);
      expect(await list()).toEqual(before);
    });

    it.each([
      ["listSessions", "GET", "/v1/servers/local/sessions?projectId=a&projectId=b"],
      ["deleteServer", "DELETE", "/v1/servers/local?projectId=global&projectId=global"],
    ])("%s: a repeated projectId query parameter", async (_, method, path) => {
      const response = await target.fetch(new Request(new URL(path.replace("/servers/local", `/servers/${server}`), target.api.baseUrl), { method }));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ _tag: "ValidationError", message: expect.stringContaining("projectId") });
      expect(await list()).toEqual(before);
    });
  });
  describe("two servers", () => {
    it("are isolated: a Session of one is unknown to the other, and listing or deleting one server leaves the other alone", async () => {
      const second = await host.otherServer();
      try {
        const on = (other: ModelHost) => ({ client: other.api.client, server: other.server });
        const mine = await create();
        const theirId = await second.createSession({ defaultModel: "test/theirs" });
        // Neither server knows the other's Session: get, delete, configuration and a prompt are 404.
        expect(await failure(getCall(theirId))).toMatchObject(NOT_FOUND_SESSION);
        expect(await failure(sdk.getSession({ client: on(second).client, path: { server: second.server, sessionId: mine.id } }))).toMatchObject(NOT_FOUND_SESSION);
        expect(await failure(sdk.deleteSession({ client: client(), path: { server, sessionId: theirId } }))).toMatchObject(NOT_FOUND_SESSION);
        expect(await failure(sdk.getSessionConfiguration({ client: client(), path: { server, sessionId: theirId } }))).toMatchObject(NOT_FOUND_SESSION);
        const prompt = { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "hi" }] };
        expect(await failure(sdk.submitPrompt({ client: client(), path: { server, sessionId: theirId }, headers: { "x-ze-harness-client-id": "t" }, body: prompt as never }))).toMatchObject(NOT_FOUND_SESSION);
        expect((await list()).map((session) => session.id)).toEqual([mine.id]);
        expect((await ok(sdk.listSessions({ client: on(second).client, path: { server: second.server } }))).sessions.map((session) => session.id)).toEqual([theirId]);
        // Deleting one server's Sessions leaves the other's.
        expect((await ok(sdk.deleteServer({ client: client(), path: { server } }))).deleted.sessionIds).toEqual([mine.id]);
        expect((await ok(sdk.getSession({ client: on(second).client, path: { server: second.server, sessionId: theirId } }))).session.defaultModel).toBe("test/theirs");
      } finally {
        await second.close();
      }
    });
  });
});

describe("on the in-process Node harness", () => {
  beforeEach(async () => {
    target = t = await startHarness();
  });
  afterEach(async () => {
    await t.close();
  });

  // Node only: workdirs are directories of the Node host's disk (the Worker's live in /workspace, worker/workspace.ts).
  describe("createSession", () => {
    it("accepts a relative workdir inside the root and stores it relative", async () => {
      mkdirSync(join(t.home.root, "packages", "app"), { recursive: true });
      const session = await create({ workdir: "packages/app" });
      expect(session.workdir).toBe("packages/app");
    });

    it("accepts an absolute workdir and stores it absolute", async () => {
      const elsewhere = directory("elsewhere");
      const session = await create({ workdir: elsewhere });
      expect(session.workdir).toBe(elsewhere);
    });

    it("stores a clientWorkdir inside the root relative to the root", async () => {
      mkdirSync(join(t.home.root, "src", "lib"), { recursive: true });
      const session = await create({ clientWorkdir: join(t.home.root, "src", "lib") });
      expect(session.workdir).toBe("src/lib");
    });

    it("stores a clientWorkdir equal to the root as '.'", async () => {
      const session = await create({ clientWorkdir: t.home.root });
      expect(session.workdir).toBe(".");
    });

    it("lets an explicit workdir win over a clientWorkdir hint", async () => {
      mkdirSync(join(t.home.root, "a"));
      const session = await create({ workdir: "a", clientWorkdir: directory("outside") });
      expect(session.workdir).toBe("a");
    });

    it("rejects a clientWorkdir outside the root with 400 and creates nothing", async () => {
      const id = randomUUID();
      const error = await failure(createCall(id, { clientWorkdir: directory("outside") }));
      expect(error).toMatchObject(VALIDATION);
      expect(error.body.message).toMatch(/clientWorkdir/);
      expect(await failure(getCall(id))).toMatchObject(NOT_FOUND_SESSION);
      expect(await list()).toEqual([]);
    });

    it.each([["../"], [".."], ["a/../../x"], ["a/.."]])("rejects a workdir with '..' (%s) with 400 and creates nothing", async (workdir) => {
      mkdirSync(join(t.home.root, "a"), { recursive: true });
      const id = randomUUID();
      expect(await failure(createCall(id, { workdir }))).toMatchObject(VALIDATION);
      expect(await failure(getCall(id))).toMatchObject(NOT_FOUND_SESSION);
    });

    it("rejects a workdir that does not exist with 400 naming it, and creates nothing", async () => {
      const id = randomUUID();
      const error = await failure(createCall(id, { workdir: "missing/dir" }));
      expect(error).toMatchObject(VALIDATION);
      expect(error.body.message).toContain("missing/dir");
      expect(await list()).toEqual([]);
    });

    it("rejects an absolute workdir that does not exist with 400", async () => {
      expect(await failure(createCall(randomUUID(), { workdir: join(t.home.dir, "nope") }))).toMatchObject(VALIDATION);
      expect(await list()).toEqual([]);
    });
  });

  // Node only: project ids come from git repositories on the disk.
  describe("projectId", () => {
    it("is 'global' for a workdir outside any git repository", async () => {
      expect((await create({ workdir: directory("plain") })).projectId).toBe("global");
    });

    it("is a stable hash shared by clones of one origin remote in different directories", async () => {
      const remote = "https://github.com/example/widgets.git";
      const one = gitRepository(directory("clones", "one"), t.home.env, remote);
      const two = gitRepository(directory("clones", "two"), t.home.env, remote);
      const a = await create({ workdir: one });
      const b = await create({ workdir: two });
      expect(a.projectId).not.toBe("global");
      expect(a.projectId.length).toBeLessThanOrEqual(128);
      expect(b.projectId).toBe(a.projectId);
      // Stable: a later Session in the same repository (and in a subdirectory of it) agrees.
      expect((await create({ workdir: one })).projectId).toBe(a.projectId);
      expect((await create({ workdir: directory("clones", "one", "src") })).projectId).toBe(a.projectId);
    });

    it("differs for a repository with a different origin remote", async () => {
      const a = await create({ workdir: gitRepository(directory("r1"), t.home.env, "https://github.com/example/widgets.git") });
      const b = await create({ workdir: gitRepository(directory("r2"), t.home.env, "https://github.com/example/gadgets.git") });
      expect(b.projectId).not.toBe("global");
      expect(b.projectId).not.toBe(a.projectId);
    });

    it("is resolved for a repository inside the server root reached by a relative workdir", async () => {
      gitRepository(join(t.home.root, "repo"), t.home.env, "git@github.com:example/widgets.git");
      const outside = await create({ workdir: gitRepository(directory("other-clone"), t.home.env, "git@github.com:example/widgets.git") });
      const inside = await create({ workdir: "repo" });
      expect(inside.workdir).toBe("repo");
      expect(inside.projectId).toBe(outside.projectId);
    });
  });

  // Node only: the project id comes from a git repository on the disk.
  describe("listSessions", () => {
    it("filters by projectId", async () => {
      const plain = await create();
      const repo = gitRepository(directory("repo"), t.home.env, "https://example.com/team/project.git");
      clockPast(plain.createdAt); // so "oldest first" has one answer
      const inRepo = await create({ workdir: repo });
      expect((await list(inRepo.projectId)).map((s) => s.id)).toEqual([inRepo.id]);
      expect((await list("global")).map((s) => s.id)).toEqual([plain.id]);
      expect(await list("no-such-project")).toEqual([]);
      expect((await list()).map((s) => s.id)).toEqual([plain.id, inRepo.id]);
    });
  });

  // Node only: grants are seeded by writing the store directly (t.harness.storage).
  describe("saved permissions", () => {
    const listSaved = async (sessionId: string) =>
      (await ok(sdk.listSavedPermissions({ client: client(), path: { server, sessionId } }))).permissions;
    const remove = (sessionId: string, savedPermissionId: string) =>
      sdk.removeSavedPermission({ client: client(), path: { server, sessionId, savedPermissionId } });
    /** Test setup: a grant as the permission engine would save it. */
    const grant = (sessionId: string, action: string, createdAt: number) =>
      insertSavedPermission(t.harness.storage, {
        id: randomUUID(),
        sessionId,
        action,
        resource: "*",
        createdAt,
        sourcePermissionRequestId: randomUUID(),
      });

    it("a new Session has none", async () => {
      const { id } = await create();
      expect(await listSaved(id)).toEqual([]);
    });

    it("lists the Session's grants and removes one, returning it", async () => {
      const { id } = await create();
      const other = await create();
      const first = await grant(id, "read", 1_000);
      const second = await grant(id, "shell", 2_000);
      await grant(other.id, "write", 1_500);
      const listed = await listSaved(id);
      expect(listed.map((p) => p.id).sort()).toEqual([first.id, second.id].sort());
      expect(listed.find((p) => p.id === first.id)).toEqual({
        id: first.id,
        sessionId: id,
        action: "read",
        resource: "*",
        createdAt: 1_000,
        sourcePermissionRequestId: first.sourcePermissionRequestId,
      });
      const { permission } = await ok(remove(id, first.id));
      expect(permission).toEqual(listed.find((p) => p.id === first.id));
      expect((await listSaved(id)).map((p) => p.id)).toEqual([second.id]);
      expect(await listSaved(other.id)).toHaveLength(1);
    });

    it("removing an unknown grant, a removed one or another Session's answers 404 resource 'saved_permission'", async () => {
      const { id } = await create();
      const other = await create();
      const theirs = await grant(other.id, "read", 1_000);
      const mine = await grant(id, "read", 1_000);
      await ok(remove(id, mine.id));
      const notFound = { status: 404, body: { _tag: "NotFoundError", resource: "saved_permission" } };
      expect(await failure(remove(id, randomUUID()))).toMatchObject(notFound);
      expect(await failure(remove(id, mine.id))).toMatchObject(notFound);
      expect(await failure(remove(id, theirs.id))).toMatchObject(notFound);
      expect(await listSaved(other.id)).toHaveLength(1);
    });

    it("listing or removing on an unknown Session answers 404 resource 'session'", async () => {
      const id = randomUUID();
      expect(await failure(sdk.listSavedPermissions({ client: client(), path: { server, sessionId: id } }))).toMatchObject(NOT_FOUND_SESSION);
      expect(await failure(remove(id, randomUUID()))).toMatchObject(NOT_FOUND_SESSION);
    });
  });

  // Node only: the project id comes from a git repository on the disk.
  describe("deleteServer", () => {
    it("deletes only one project's Sessions when given a projectId", async () => {
      const plain = await create();
      const inRepo = await create({ workdir: gitRepository(directory("repo"), t.home.env, "https://example.com/a/b.git") });
      const { deleted } = await ok(sdk.deleteServer({ client: client(), path: { server }, query: { projectId: inRepo.projectId } }));
      expect(deleted.sessionIds).toEqual([inRepo.id]);
      expect(await list()).toEqual([plain]);
      expect(await failure(createCall(inRepo.id, { workdir: directory("repo") }))).toMatchObject(CONFLICT);
    });
  });
});
