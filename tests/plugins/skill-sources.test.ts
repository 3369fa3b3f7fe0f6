// Skill sources (`context.skills.registerSource`) through a real plugin file loaded by config:
// a workspace catalog (`catalog.json` + `<id>/skill.md`), a workspace directory of standard
// SKILL.md files (a malformed one skipped, the later of two same names winning), and an HTTP
// catalog served locally (a redirect kept in the catalog's origin followed); their
// Skills are listed, transformed by the scope's transforms, and load in a Turn. A source that
// cannot be read fails its plugin, naming the source.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server as serverName } from "../turns/helpers.js";

let h: ModelHarness | undefined;
let second: Awaited<ReturnType<typeof import("../support/harness.js").startHarness>> | undefined;
let http: Server | undefined;
afterEach(async () => {
  await second?.harness.close();
  second = undefined;
  await h?.close();
  h = undefined;
  http?.closeAllConnections();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  http = undefined;
});

const seenHeaders: string[] = [];
async function catalogServer(): Promise<string> {
  http = createServer((request, response) => {
    seenHeaders.push(String(request.headers["x-catalog-token"]));
    if (request.url === "/old/catalog.json") return void response.writeHead(302, { location: "/pkg/catalog.json" }).end();
    if (request.url === "/evil/catalog.json") return void response.writeHead(302, { location: `http://localhost:${(http!.address() as { port: number }).port}/pkg/catalog.json` }).end();
    if (request.url === "/pkg/catalog.json") return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ schemaVersion: 1, version: "2.0.0", skills: [{ body: "remote-guide/skill.md" }] }));
    if (request.url === "/pkg/remote-guide/skill.md") {
      return void response.writeHead(200, { "content-type": "text/markdown" }).end("---\nid: remote-guide\nname: Remote guide\ndescription: Served over HTTP\nversion: 1.2.0\nadvertised: true\nuser-invocable: true\ntags: [\"remote\"]\n---\nREMOTE-SKILL-BODY\n");
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(http.address() as { port: number }).port}`;
}

const plugin = (catalogUrl: string) => `
export default {
  id: "example.sources",
  setup(context) {
    context.skills.registerSource({ kind: "workspace", id: "team-catalog", directory: "skills-cat" });
    context.skills.registerSource({ kind: "workspace", id: "team-tree", directory: "skills-dir", format: "directory" });
    context.skills.registerSource({ kind: "http", id: "remote", catalogUrl: ${JSON.stringify(catalogUrl)}, headers: [] });
    context.skills.registerTransform({ id: "shout", transform: (skill) => (skill.source.kind === "http" ? { displayName: skill.displayName.toUpperCase() } : undefined) });
  },
};
`;

async function start(catalogUrl: string): Promise<NonNullable<typeof second>> {
  h = await startModelHarness();
  const root = h.home.root;
  mkdirSync(join(root, "skills-cat", "deploy"), { recursive: true });
  writeFileSync(join(root, "skills-cat", "catalog.json"), JSON.stringify({ schemaVersion: 1, version: "1.0.0", skills: [{ body: "deploy/skill.md", files: ["deploy/run.sh"] }] }));
  writeFileSync(
    join(root, "skills-cat", "deploy", "skill.md"),
    "---\nid: deploy\nname: Deploy\ndescription: How we deploy\nversion: 3.1.0\nadvertised: true\nuser-invocable: false\nauthor: Ops\n---\nCATALOG-SKILL-BODY\n",
  );
  for (const [dir, text] of [
    ["a", "---\nname: tree-skill\ndescription: The first one\n---\nFIRST\n"],
    ["b", "---\nname: tree-skill\ndescription: The later one\n---\nTREE-SKILL-BODY\n"],
    ["c", "no frontmatter here"],
  ] as const) {
    mkdirSync(join(root, "skills-dir", dir), { recursive: true });
    writeFileSync(join(root, "skills-dir", dir, "SKILL.md"), text);
  }
  const file = join(h.home.dir, "sources.mjs");
  writeFileSync(file, plugin(catalogUrl));
  writeFileSync(join(root, "ze-harness.config.json"), JSON.stringify({ plugins: [file] }));
  await h.harness.close();
  const { startHarness } = await import("../support/harness.js");
  second = await startHarness({}, h.home);
  return second;
}

describe("Skill sources", () => {
  it("contribute Skills from a workspace catalog, a workspace tree and an HTTP catalog, transformed and loadable", async () => {
    const base = await catalogServer();
    const host = await start(`${base}/old/catalog.json`);
    const api = { api: host.api, fetch: host.fetch };
    const sessionId = crypto.randomUUID();
    await ok(sdk.createSession({ client: api.api.client, path: { server: serverName, sessionId }, body: {} }));
    const { skills } = await ok(sdk.sessionSkills({ client: api.api.client, path: { server: serverName, sessionId } }));
    const byId = new Map(skills.map((skill) => [skill.id, skill]));
    expect(byId.get("deploy")).toMatchObject({ displayName: "Deploy", description: "How we deploy" });
    expect(byId.get("tree-skill")).toMatchObject({ description: "The later one" });
    expect(byId.get("remote-guide")).toMatchObject({ displayName: "REMOTE GUIDE" });
    expect(seenHeaders.length).toBeGreaterThanOrEqual(3);

    h!.model.enqueue(
      { events: [{ type: "tool_call", name: "skill", arguments: { name: "remote-guide" } }] },
      { events: [{ type: "tool_call", name: "skill", arguments: { name: "tree-skill" } }] },
      { events: [{ type: "tool_call", name: "skill", arguments: { name: "deploy" } }] },
      { events: [{ type: "text", text: "done" }] },
    );
    const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "use them")).turnId);
    const results = turn.parts.filter((part): part is ToolTurnPart => part.type === "tool").map((part) => JSON.stringify(part.canonicalResult));
    expect(results[0]).toContain("REMOTE-SKILL-BODY");
    expect(results[1]).toContain("TREE-SKILL-BODY");
    expect(results[2]).toContain("CATALOG-SKILL-BODY");
  });

  it("a source that cannot be read fails its plugin, naming the source", async () => {
    const base = await catalogServer();
    // A configured plugin that fails activation fails the host's start, naming it and the source.
    await expect(start(`${base}/missing/catalog.json`)).rejects.toThrow(/Skill source "remote".*HTTP 404/);
  });

  it("an HTTP catalog that redirects to another origin is refused", async () => {
    const base = await catalogServer();
    await expect(start(`${base}/evil/catalog.json`)).rejects.toThrow(/Skill source "remote".*redirects outside http:\/\/127\.0\.0\.1/);
  });
});
