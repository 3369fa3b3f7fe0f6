// A hostile model's paths and patterns against the Worker's `/workspace` store, in workerd
// (miniflare) over the bundle of fixtures/files-object.ts: `..` after normalisation, encoded and
// NUL-bearing names, over-long names and paths stay `invalid_path` with nothing changed; a glob of
// many `*`, or of many `**`, over long names answers (the matcher is linear) where a regular
// expression would backtrack for as long as the object lives; globs never list outside the root.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
// @ts-expect-error -- a plain .mjs build tool without types
import { WASM_MODULE_RULES } from "../../tools/worker/bundle.mjs";
import { bundle, miniflare } from "./support.js";

let mf: Miniflare;

const post = async (path: string, body: unknown): Promise<{ status: number; body: any }> => {
  const response = await mf.dispatchFetch(`http://worker${path}?object=attacks`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: response.status, body: await response.json() };
};
const tool = (name: string, input: unknown, workdir = "/workspace") => post("/tool", { tool: name, input, workdir });
const store = (op: string, args: Record<string, unknown>) => post("/store", { op, ...args });
const snapshot = async () => (await post("/snapshot", {})).body;

beforeAll(async () => {
  const script = await bundle("tests/worker/fixtures/files-object.ts");
  mf = miniflare(script, { durableObjects: { FILES: { className: "FilesObject", useSQLite: true } }, modulesRules: WASM_MODULE_RULES });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

describe("/workspace store under a hostile model (workerd)", () => {
  it("answers globs of many wildcards over long names, matching exactly what the glob says", async () => {
    const long = "a".repeat(200);
    expect((await tool("write", { filePath: `deep/${long}`, content: "x" })).status).toBe(200);
    expect((await tool("write", { filePath: `deep/${"b/".repeat(40)}${long}`, content: "y" })).status).toBe(200);
    // Backtracking regular expressions take longer than this object would live on these two.
    expect((await store("glob", { pattern: `deep/${"*a".repeat(14)}*b` })).body).toEqual({ paths: [], truncated: false });
    expect((await store("glob", { pattern: `${"**/".repeat(20)}c` })).body).toEqual({ paths: [], truncated: false });
    expect((await store("glob", { pattern: `deep/${"*a".repeat(14)}*` })).body).toEqual({ paths: [`/workspace/deep/${long}`], truncated: false });
    expect((await store("glob", { pattern: `${"**/".repeat(20)}${"a".repeat(199)}?` })).body.paths).toHaveLength(2);
    expect((await store("glob", { pattern: "deep/**/b/*" })).body.paths).toEqual([`/workspace/deep/${"b/".repeat(40)}${long}`]);
    expect((await store("glob", { pattern: "deep/*" })).body.paths).toEqual([`/workspace/deep/${long}`]);
    expect((await store("glob", { pattern: "deep/**" })).body.paths).toHaveLength(2);
    expect((await store("grep", { pattern: "^y$", glob: "**/b/**" })).body.matches).toHaveLength(1);
  });

  it("keeps every path inside /workspace and refuses bad ones, changing nothing", async () => {
    const before = await snapshot();
    for (const filePath of ["../etc/passwd", "/workspace/../workspace2/x", "a/../../x", "/workspace/%2e%2e/x/../../../x", "/workspace/./../x", "a\u0000b", "x".repeat(256), `${"d/".repeat(2100)}f`, "/etc/passwd", "/workspacefoo/x"]) {
      const written = await tool("write", { filePath, content: "owned" });
      expect(written.body, filePath).toMatchObject({ failure: { code: expect.stringMatching(/invalid_path|external|outside/) } });
    }
    const after = await snapshot();
    expect(after).toEqual(before);
    for (const pattern of ["../*", "/*", "/etc/*", "../../**"]) {
      const globbed = await store("glob", { pattern });
      expect(JSON.stringify(globbed.body), pattern).not.toContain('"/etc');
      expect(globbed.status === 200 ? globbed.body.paths.every((path: string) => path.startsWith("/workspace/")) : true).toBe(true);
    }
  });
});
