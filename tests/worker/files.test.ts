// The Worker's `/workspace` store and its file tools in workerd (miniflare): a Durable Object
// (tests/worker/fixtures/files-object.ts) migrates the store after the server migrations (once),
// then the tools write, read, edit and list through the object's SQLite with the Node tools'
// results; paths are confined to `/workspace` and a refused call changes nothing; the size bound
// holds; glob, grep, AGENTS.md and a second object's separate store.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
// @ts-expect-error -- a plain .mjs build tool without types
import { WASM_MODULE_RULES } from "../../tools/worker/bundle.mjs";
import { bundle, miniflare } from "./support.js";

let mf: Miniflare;

const post = async (path: string, body: unknown, object = "a"): Promise<{ status: number; body: any }> => {
  const response = await mf.dispatchFetch(`http://worker${path}?object=${object}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: response.status, body: await response.json() };
};
const tool = (name: string, input: unknown, workdir = "/workspace", object = "a") => post("/tool", { tool: name, input, workdir }, object);
const store = (op: string, args: Record<string, unknown>, object = "a") => post("/store", { op, ...args }, object);
const snapshot = async (object = "a") => (await post("/snapshot", {}, object)).body;

beforeAll(async () => {
  const script = await bundle("tests/worker/fixtures/files-object.ts");
  mf = miniflare(script, { durableObjects: { FILES: { className: "FilesObject", useSQLite: true } }, modulesRules: WASM_MODULE_RULES });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

describe("/workspace file store (workerd)", () => {
  it("migrates its own table once, under its own ledger, after the server migrations", async () => {
    const { body } = await post("/migration", {});
    expect(body).toEqual({ ledger: ["0001_workspace_entries"], again: [] });
  });

  it("writes, reads, edits and lists through the file tools with the Node tools' results", async () => {
    const written = await tool("write", { filePath: "src/app.ts", content: "const a = 1;\nconst b = 2;\n" }, "/workspace/proj");
    expect(written.status).toBe(200);
    expect(written.body.output.result).toEqual({ format: "text", value: "Created src/app.ts (26 bytes)." });
    expect(written.body.projections).toEqual([{ action: "edit", resources: ["src/app.ts"], save: ["src/app.ts"], metadata: { canonicalPath: "/workspace/proj/src/app.ts" } }]);

    const read = await tool("read", { filePath: "src/app.ts" }, "/workspace/proj");
    expect(read.body.output.result.value).toBe("     1\tconst a = 1;\n     2\tconst b = 2;\n\n(End of file: 2 lines.)");
    expect(read.body.output.instructionTarget).toEqual({ path: "/workspace/proj/src/app.ts", isDirectory: false });

    const edited = await tool("edit", { filePath: "src/app.ts", oldString: "const b = 2;", newString: "const b = 3;" }, "/workspace/proj");
    expect(edited.body.output.result.value).toBe("Edited src/app.ts: replaced 1 occurrence.");
    expect((await tool("read", { filePath: "/workspace/proj/src/app.ts", offset: 2 }, "/workspace/proj")).body.output.result.value).toBe("     2\tconst b = 3;\n\n(End of file: 2 lines.)");

    const ambiguous = await tool("edit", { filePath: "src/app.ts", oldString: "const", newString: "let" }, "/workspace/proj");
    expect(ambiguous.body.failure).toMatchObject({ tag: "ToolFailure", code: "ambiguous_match" });
    expect((await tool("edit", { filePath: "src/app.ts", oldString: "const", newString: "let", replaceAll: true }, "/workspace/proj")).body.output.result.value).toBe("Edited src/app.ts: replaced 2 occurrences.");

    expect((await tool("write", { filePath: "src/app.ts", content: "x" }, "/workspace/proj")).body.output.result.value).toBe("Replaced src/app.ts (1 bytes).");
    await tool("write", { filePath: "README.md", content: "# p\n" }, "/workspace/proj");
    const listing = await tool("read", { filePath: "." }, "/workspace/proj");
    expect(listing.body.output.result).toEqual({ format: "json", value: { kind: "directory", path: ".", entries: ["README.md", "src/"], offset: 1, totalEntries: 2, truncated: false } });
    const paged = await tool("read", { filePath: ".", limit: 1 }, "/workspace/proj");
    expect(paged.body.output.result.value).toMatchObject({ entries: ["README.md"], truncated: true, nextOffset: 2 });

    // Outside the workdir but inside /workspace: absolute resource and an external_directory ask, as on Node.
    const outside = await tool("read", { filePath: "../other.txt" }, "/workspace/proj");
    expect(outside.body.failure).toMatchObject({ code: "not_found" });
    const projected = await tool("write", { filePath: "../other.txt", content: "o" }, "/workspace/proj");
    expect(projected.body.projections[0]).toEqual({ action: "external_directory", resources: ["/workspace/*"], save: ["/workspace/*"] });
    expect(projected.body.output.result.value).toBe("Created /workspace/other.txt (1 bytes).");

    expect((await tool("read", { filePath: "src/app.ts", offset: 5 }, "/workspace/proj")).body.failure).toMatchObject({ code: "invalid_offset" });
    expect((await tool("read", { artifact: "x" }, "/workspace/proj")).body.failure).toMatchObject({ code: "resource_not_in_session" });
  });

  it("confines paths to /workspace and refuses bad ones with typed failures, changing nothing", async () => {
    await tool("write", { filePath: "keep.txt", content: "keep\n" });
    const before = await snapshot();
    const refusals: [string, unknown][] = [
      ["write", { filePath: "../../etc/passwd", content: "x" }],
      ["write", { filePath: "/etc/passwd", content: "x" }],
      ["write", { filePath: "/workspace/../etc/x", content: "x" }],
      ["write", { filePath: "a\u0000b", content: "x" }],
      ["write", { filePath: `${"n".repeat(256)}.txt`, content: "x" }],
      ["read", { filePath: "/etc/passwd" }],
      ["edit", { filePath: "../../keep.txt", oldString: "keep", newString: "lost" }],
    ];
    for (const [name, input] of refusals) {
      const { status, body } = await tool(name, input);
      expect(status, JSON.stringify(input)).toBe(422);
      expect(body.failure, JSON.stringify(input)).toMatchObject({ tag: "ToolFailure", code: "invalid_path" });
    }
    // A file where a directory must be, a directory where a file must be.
    expect((await tool("write", { filePath: "keep.txt/inner", content: "x" })).body.failure).toMatchObject({ code: "not_file" });
    expect((await tool("write", { filePath: "proj", content: "x" })).body.failure).toMatchObject({ code: "not_file" });
    expect((await tool("edit", { filePath: "keep.txt", oldString: "absent", newString: "x" })).body.failure).toMatchObject({ code: "no_match" });
    // The store's own methods confine what they are given too, whoever calls them.
    expect((await store("writeBytes", { path: "/etc/passwd", bytes: [0x78] })).body.failure).toMatchObject({ tag: "WorkspaceFileError", code: "invalid_path" });
    expect((await store("writeBytes", { path: "/workspace/../x", bytes: [0x78] })).body.failure).toMatchObject({ code: "invalid_path" });
    expect(await snapshot()).toEqual(before);

    // The plugin API's WorkspaceFiles answers with WorkspaceFileError codes, never a path.
    const escaped = await store("readText", { filePath: "/workspace/../../etc/passwd" });
    expect(escaped.body.failure).toEqual({ tag: "WorkspaceFileError", code: "invalid_path", message: "Workspace file failed: invalid_path" });
    expect((await store("readText", { filePath: "missing.txt" })).body.failure).toMatchObject({ code: "not_found" });
    expect((await store("readText", { filePath: "keep.txt", maxBytes: 2 })).body.failure).toMatchObject({ code: "max_bytes_exceeded" });
    expect((await store("readText", { filePath: "keep.txt" })).body).toEqual({ filePath: "keep.txt", content: "keep\n", byteLength: 5 });
    expect((await store("resolvePath", { filePath: "../x", cwd: "/workspace/proj" })).body).toEqual({
      canonicalPath: "/workspace/x", resource: "/workspace/x", externalDirectory: { resource: "/workspace/*", save: "/workspace/*" },
    });
    expect((await store("writeBytes", { path: "/workspace/bad.txt", bytes: [0xff, 0xfe] })).status).toBe(200);
    expect((await tool("read", { filePath: "bad.txt" })).body.failure).toMatchObject({ code: "invalid_utf8" });
    expect((await store("removeFile", { filePath: "bad.txt" })).body).toEqual({ filePath: "bad.txt" });
    expect((await store("removeFile", { filePath: "bad.txt" })).body.failure).toMatchObject({ code: "not_found" });
  });

  it("holds the size bound: a larger file is too_large and nothing changes; a file of chunks reads back page by page", async () => {
    // The fixture's store holds at most 1 MiB per file (two 512 KiB chunks).
    const before = await snapshot();
    const big = await store("fill", { path: "/workspace/big.txt", size: 1024 * 1024 + 1 });
    expect(big.body.failure).toEqual({ tag: "WorkspaceFileError", code: "too_large", message: "Workspace file failed: too_large" });
    expect((await tool("write", { filePath: "big.txt", content: "a".repeat(1024 * 1024 + 1) })).body.failure).toMatchObject({ code: "too_large" });
    expect(await snapshot()).toEqual(before);

    // Under the bound, in two chunks; `read` pages it under 50 KiB like the Node tool.
    const lines = Array.from({ length: 19_000 }, (_, index) => `line ${String(index).padStart(6, "0")} ${"x".repeat(40)}`).join("\n");
    const written = await tool("write", { filePath: "lines.txt", content: lines });
    expect(written.body.output.result.value).toBe(`Created lines.txt (${lines.length} bytes).`);
    const page = await tool("read", { filePath: "lines.txt", offset: 18_999 });
    expect(page.body.output.result.value).toBe(` 18999\tline 018998 ${"x".repeat(40)}\n 19000\tline 018999 ${"x".repeat(40)}\n\n(End of file: 19000 lines.)`);
    const first = await tool("read", { filePath: "lines.txt" });
    expect(first.body.output.result.value).toMatch(/\(Output capped at 50 KiB\. Showing lines 1-\d+\. Use offset=\d+ to continue\.\)$/);
  });

  it("globs and greps the store, reads AGENTS.md, and keeps another object's store apart", async () => {
    await tool("write", { filePath: "g/a.ts", content: "export const alpha = 1;\n" });
    await tool("write", { filePath: "g/deep/b.ts", content: "// beta\nexport const beta = 2;\n" });
    await tool("write", { filePath: "g/c.md", content: "alpha beta\n" });
    expect((await store("glob", { pattern: "g/**/*.ts" })).body).toEqual({ paths: ["/workspace/g/a.ts", "/workspace/g/deep/b.ts"], truncated: false });
    expect((await store("glob", { pattern: "*.ts", cwd: "/workspace/g" })).body).toEqual({ paths: ["/workspace/g/a.ts"], truncated: false });
    expect((await store("grep", { pattern: "export const \\w+ = 2", glob: "g/**" })).body).toEqual({ matches: [{ path: "/workspace/g/deep/b.ts", line: 2, text: "export const beta = 2;" }], truncated: false });

    expect((await store("agents", { workdir: "/workspace/g" })).body).toEqual({ instructions: null });
    await tool("write", { filePath: "g/AGENTS.md", content: "\uFEFFUse tabs.\n" });
    expect((await store("agents", { workdir: "/workspace/g" })).body.instructions).toEqual({ _tag: "InstructionFile", path: "AGENTS.md", canonicalPath: "/workspace/g/AGENTS.md", content: "Use tabs.\n" });
    // Nested files between a read target and the workdir, nearest-first (the workdir's own is the Session-level one).
    await tool("write", { filePath: "g/deep/AGENTS.md", content: "Deep rules.\n" });
    const nested = await store("nestedAgents", { workdir: "/workspace", target: "/workspace/g/deep/b.ts", isDirectory: false });
    expect(nested.body.found.map((file: { path: string }) => file.path)).toEqual(["g/deep/AGENTS.md", "g/AGENTS.md"]);
    expect((await store("nestedAgents", { workdir: "/workspace/g", target: "/workspace/g/deep", isDirectory: true })).body.found).toEqual([
      { _tag: "InstructionFile", path: "deep/AGENTS.md", canonicalPath: "/workspace/g/deep/AGENTS.md", content: "Deep rules.\n" },
    ]);
    await store("fill", { path: "/workspace/g/AGENTS.md", size: 51_201 });
    expect((await store("agents", { workdir: "/workspace/g" })).body.instructions).toMatchObject({ _tag: "InstructionFileInvalid", reason: "oversized", message: "AGENTS.md cannot be applied: it is larger than 51200 bytes." });

    expect((await tool("read", { filePath: "g/a.ts" }, "/workspace", "b")).body.failure).toMatchObject({ code: "not_found" });
    expect((await tool("read", { filePath: "." }, "/workspace", "b")).body.output.result.value).toMatchObject({ entries: [], totalEntries: 0 });
  });
});
