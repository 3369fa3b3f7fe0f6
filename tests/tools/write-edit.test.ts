import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { evaluateProjection } from "../../services/core/permissions/index.js";
import { ToolFailure, editTool, writeTool, type ToolFailureCode } from "../../services/tools/index.js";
import { call, context, text, workspace, type Workspace } from "./helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.dispose());

async function expectFailure(promise: Promise<unknown>, code: ToolFailureCode, message?: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  expect((error as ToolFailure).code).toBe(code);
  if (message) expect((error as ToolFailure).message).toMatch(message);
}

describe("atomic replacement", () => {
  it("keeps the file's mode, leaves no temporary file, and a concurrent reader sees old or new content only", async () => {
    const before = "a".repeat(4 * 1024 * 1024);
    const after = "b".repeat(4 * 1024 * 1024);
    ws.write("big.sh", before);
    chmodSync(join(ws.workdir, "big.sh"), 0o750);
    const seen = new Set<string>();
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const content = readFileSync(join(ws.workdir, "big.sh"), "utf8");
        seen.add(content === before ? "old" : content === after ? "new" : `partial:${content.length}`);
        await new Promise((resolvePromise) => setImmediate(resolvePromise));
      }
    })();
    await call(writeTool, { filePath: "big.sh", content: after }, context(ws.workdir));
    writing = false;
    await reader;
    expect([...seen].filter((kind) => kind.startsWith("partial"))).toEqual([]);
    expect(ws.read("big.sh")).toBe(after);
    expect(statSync(join(ws.workdir, "big.sh")).mode & 0o777).toBe(0o750);
    ws.write("small.txt", "hello there");
    chmodSync(join(ws.workdir, "small.txt"), 0o640);
    await call(editTool, { filePath: "small.txt", oldString: "hello", newString: "bye" }, context(ws.workdir));
    expect(ws.read("small.txt")).toBe("bye there");
    expect(statSync(join(ws.workdir, "small.txt")).mode & 0o777).toBe(0o640);
    expect(readdirSync(ws.workdir).filter((name) => name.endsWith(".ze-tmp"))).toEqual([]);
  });
});

describe("write", () => {
  it("creates missing parent directories and the file", async () => {
    const out = text(await call(writeTool, { filePath: "a/b/c/new.txt", content: "héllo\n" }, context(ws.workdir)));
    expect(ws.read("a/b/c/new.txt")).toBe("héllo\n");
    expect(out).toBe("Created a/b/c/new.txt (7 bytes).");
  });

  it("replaces an existing file", async () => {
    ws.write("x.txt", "old");
    const out = text(await call(writeTool, { filePath: "x.txt", content: "new" }, context(ws.workdir)));
    expect(ws.read("x.txt")).toBe("new");
    expect(out).toBe("Replaced x.txt (3 bytes).");
  });

  it("refuses a directory target and a file parent", async () => {
    mkdirSync(join(ws.workdir, "dir"));
    await expectFailure(call(writeTool, { filePath: "dir", content: "x" }, context(ws.workdir)), "not_file");
    ws.write("file", "x");
    await expectFailure(call(writeTool, { filePath: "file/child.txt", content: "x" }, context(ws.workdir)), "not_file");
  });

  it("projects action edit; outside paths add external_directory", () => {
    const ctx = context(ws.workdir);
    expect(writeTool.permissions({ filePath: "n.txt", content: "" }, ctx)).toEqual([
      { action: "edit", resources: ["n.txt"], save: ["n.txt"], metadata: { canonicalPath: join(ws.workdir, "n.txt") } },
    ]);
    const outside = writeTool.permissions({ filePath: join(ws.outside, "new/deep.txt"), content: "" }, ctx);
    expect(outside[0]).toEqual({ action: "external_directory", resources: [`${ws.outside}/new/*`], save: [`${ws.outside}/new/*`] });
    expect(evaluateProjection(outside[0]!, {}).effect).toBe("ask");
  });

  it("writes through a symlink to its (authorized) target", async () => {
    symlinkSync(join(ws.outside, "target.txt"), join(ws.workdir, "link.txt"));
    const ctx = context(ws.workdir);
    const projections = writeTool.permissions({ filePath: "link.txt", content: "" }, ctx);
    expect(projections[0]!.action).toBe("external_directory");
    await call(writeTool, { filePath: "link.txt", content: "through" }, ctx);
    expect(readFileSync(join(ws.outside, "target.txt"), "utf8")).toBe("through");
  });
});

describe("edit", () => {
  it("replaces a unique exact match", async () => {
    ws.write("code.ts", "const a = 1;\nconst b = 2;\n");
    const out = text(await call(editTool, { filePath: "code.ts", oldString: "const b = 2;", newString: "const b = 3;" }, context(ws.workdir)));
    expect(ws.read("code.ts")).toBe("const a = 1;\nconst b = 3;\n");
    expect(out).toBe("Edited code.ts: replaced 1 occurrence.");
  });

  it("fails when the match is not unique, leaving the file untouched", async () => {
    ws.write("dup.txt", "x = 1\nx = 1\nx = 1\n");
    await expectFailure(call(editTool, { filePath: "dup.txt", oldString: "x = 1", newString: "x = 2" }, context(ws.workdir)), "ambiguous_match", /occurs 3 times/);
    expect(ws.read("dup.txt")).toBe("x = 1\nx = 1\nx = 1\n");
  });

  it("replaceAll replaces every occurrence", async () => {
    ws.write("dup.txt", "x = 1\nx = 1\ny\n");
    const out = text(await call(editTool, { filePath: "dup.txt", oldString: "x = 1", newString: "x = 2", replaceAll: true }, context(ws.workdir)));
    expect(ws.read("dup.txt")).toBe("x = 2\nx = 2\ny\n");
    expect(out).toBe("Edited dup.txt: replaced 2 occurrences.");
  });

  it("counts non-overlapping occurrences", async () => {
    // "aa" occurs once non-overlapping in "aaa": the edit succeeds.
    ws.write("aaa.txt", "aaa");
    await call(editTool, { filePath: "aaa.txt", oldString: "aa", newString: "b" }, context(ws.workdir));
    expect(ws.read("aaa.txt")).toBe("ba");
  });

  it("inserts replacement text literally (no $-patterns)", async () => {
    ws.write("d.txt", "price: X\n");
    await call(editTool, { filePath: "d.txt", oldString: "X", newString: "$& $1 $$" }, context(ws.workdir));
    expect(ws.read("d.txt")).toBe("price: $& $1 $$\n");
  });

  it("fails without a match, on identical strings, and on missing files", async () => {
    ws.write("f.txt", "hello");
    const ctx = context(ws.workdir);
    await expectFailure(call(editTool, { filePath: "f.txt", oldString: "bye", newString: "x" }, ctx), "no_match");
    await expectFailure(call(editTool, { filePath: "f.txt", oldString: "hello", newString: "hello" }, ctx), "no_change");
    await expectFailure(call(editTool, { filePath: "nope.txt", oldString: "a", newString: "b" }, ctx), "not_found");
    expect(existsSync(join(ws.workdir, "nope.txt"))).toBe(false);
    mkdirSync(join(ws.workdir, "d"));
    await expectFailure(call(editTool, { filePath: "d", oldString: "a", newString: "b" }, ctx), "not_file");
    ws.write("bin", Buffer.from([0xc3, 0x28]));
    await expectFailure(call(editTool, { filePath: "bin", oldString: "(", newString: "x" }, ctx), "invalid_utf8");
  });

  it("keeps a byte-order mark", async () => {
    ws.write("bom.txt", "\uFEFFa b");
    await call(editTool, { filePath: "bom.txt", oldString: "b", newString: "c" }, context(ws.workdir));
    expect(readFileSync(join(ws.workdir, "bom.txt"))).toEqual(Buffer.from("\uFEFFa c"));
  });

  it("projects action edit on the file", () => {
    expect(editTool.permissions({ filePath: "src/x.ts", oldString: "a", newString: "b" }, context(ws.workdir))).toEqual([
      { action: "edit", resources: ["src/x.ts"], save: ["src/x.ts"], metadata: { canonicalPath: join(ws.workdir, "src/x.ts") } },
    ]);
  });
});
