import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { evaluateProjection } from "../../services/core/permissions/index.js";
import { MAX_FILE_READ_BYTES, ToolFailure, readTool } from "../../services/tools/index.js";
import { call, context, json, text, workspace, type Workspace, failureOf, expectCode } from "./helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.dispose());



describe("read: files", () => {
  it("returns numbered lines and an end-of-file hint", async () => {
    ws.write("a.txt", "alpha\nbeta\r\ngamma");
    const out = text(await call(readTool, { filePath: "a.txt" }, context(ws.workdir)));
    expect(out).toBe(`     1\talpha\n     2\tbeta\n     3\tgamma\n\n(End of file: 3 lines.)`);
  });

  it("a trailing newline does not add a line; an empty file says so", async () => {
    ws.write("b.txt", "one\ntwo\n");
    expect(text(await call(readTool, { filePath: "b.txt" }, context(ws.workdir)))).toContain("(End of file: 2 lines.)");
    ws.write("empty.txt", "");
    expect(text(await call(readTool, { filePath: "empty.txt" }, context(ws.workdir)))).toBe("(Empty file.)");
  });

  it("pages with offset and limit and names the next offset", async () => {
    ws.write("n.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const ctx = context(ws.workdir);
    const page = text(await call(readTool, { filePath: "n.txt", offset: 3, limit: 4 }, ctx));
    expect(page.split("\n").slice(0, 4)).toEqual(["     3\tline 3", "     4\tline 4", "     5\tline 5", "     6\tline 6"]);
    expect(page).toContain("(Showing lines 3-6; more lines follow. Use offset=7 to continue.)");
    const last = text(await call(readTool, { filePath: "n.txt", offset: 7, limit: 4 }, ctx));
    expect(last).toContain("    10\tline 10");
    expect(last).toContain("(End of file: 10 lines.)");
    await expectCode(call(readTool, { filePath: "n.txt", offset: 11 }, ctx), "invalid_offset");
  });

  it("caps the text at 50 KiB and hints where to continue", async () => {
    const line = "x".repeat(99);
    ws.write("big.txt", `${Array.from({ length: 3000 }, () => line).join("\n")}\n`);
    const out = text(await call(readTool, { filePath: "big.txt", limit: 3000 }, context(ws.workdir)));
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_FILE_READ_BYTES);
    const match = /Output capped at 50 KiB\. Showing lines 1-(\d+)\. Use offset=(\d+) to continue\./.exec(out);
    expect(match).not.toBeNull();
    const shown = Number(match![1]);
    expect(Number(match![2])).toBe(shown + 1);
    expect(out).toContain(`${String(shown).padStart(6)}\t${line}`);
    const next = text(await call(readTool, { filePath: "big.txt", offset: shown + 1, limit: 10 }, context(ws.workdir)));
    expect(next.startsWith(`${String(shown + 1).padStart(6)}\t${line}`)).toBe(true);
  });

  it("reads a page of a file far larger than the cap", async () => {
    ws.write("huge.txt", "y\n".repeat(2_000_000)); // 4 MB
    const out = text(await call(readTool, { filePath: "huge.txt", offset: 1_500_000, limit: 2 }, context(ws.workdir)));
    expect(out).toBe("1500000\ty\n1500001\ty\n\n(Showing lines 1500000-1500001; more lines follow. Use offset=1500002 to continue.)");
  });

  it("cuts very long lines", async () => {
    ws.write("long.txt", "z".repeat(5000));
    const out = text(await call(readTool, { filePath: "long.txt" }, context(ws.workdir)));
    expect(out).toContain(`${"z".repeat(2000)}… (line truncated)`);
    expect(out).not.toContain("z".repeat(2001));
  });

  it("fails with typed codes", async () => {
    const ctx = context(ws.workdir);
    await expectCode(call(readTool, { filePath: "missing.txt" }, ctx), "not_found");
    ws.write("bin.dat", Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x0a]));
    await expectCode(call(readTool, { filePath: "bin.dat" }, ctx), "invalid_utf8");
    ws.write("file.txt", "x");
    await expectCode(call(readTool, { filePath: "file.txt/below" }, ctx), "not_file");
    await expectCode(call(readTool, { filePath: "a\0b" }, ctx), "invalid_path");
    const failure = await failureOf(call(readTool, { filePath: "missing.txt" }, ctx));
    expect(failure.toFault()).toEqual({ code: "not_found", message: 'Nothing exists at "missing.txt".' });
    expect(failure._tag).toBe("ToolFailure");
  });

  it("refuses to start when already aborted", async () => {
    ws.write("a.txt", "a");
    const ctx = context(ws.workdir);
    ctx.controller.abort();
    await expectCode(call(readTool, { filePath: "a.txt" }, ctx), "interrupted");
  });
});

describe("read: directories", () => {
  it("lists entries sorted by name, directories with a slash", async () => {
    ws.write("b.txt", "");
    ws.write("a.txt", "");
    mkdirSync(join(ws.workdir, "c"));
    symlinkSync(join(ws.workdir, "c"), join(ws.workdir, "d-link"));
    symlinkSync(join(ws.workdir, "nowhere"), join(ws.workdir, "e-dangling"));
    const out = json(await call(readTool, { filePath: "." }, context(ws.workdir)));
    expect(out).toEqual({ kind: "directory", path: ".", entries: ["a.txt", "b.txt", "c/", "d-link/", "e-dangling"], offset: 1, totalEntries: 5, truncated: false });
  });

  it("pages with offset and limit", async () => {
    for (let i = 0; i < 7; i++) ws.write(`dir/f${i}`, "");
    const ctx = context(ws.workdir);
    const first = json(await call(readTool, { filePath: "dir", limit: 3 }, ctx));
    expect(first).toEqual({ kind: "directory", path: "dir", entries: ["f0", "f1", "f2"], offset: 1, totalEntries: 7, truncated: true, nextOffset: 4 });
    const last = json(await call(readTool, { filePath: "dir", offset: 6, limit: 3 }, ctx));
    expect(last).toEqual({ kind: "directory", path: "dir", entries: ["f5", "f6"], offset: 6, totalEntries: 7, truncated: false });
  });
});

describe("read: permissions", () => {
  it("inside the workdir: one workdir-relative read projection carrying the canonical path", () => {
    ws.write("src/a.ts", "");
    const ctx = context(ws.workdir);
    expect(readTool.permissions({ filePath: "src/a.ts" }, ctx)).toEqual([
      { action: "read", resources: ["src/a.ts"], save: ["src/a.ts"], metadata: { canonicalPath: join(ws.workdir, "src/a.ts") } },
    ]);
    expect(readTool.permissions({ filePath: join(ws.workdir, "src/./../src/a.ts") }, ctx)[0]!.resources).toEqual(["src/a.ts"]);
    expect(readTool.permissions({ filePath: "." }, ctx)[0]!.resources).toEqual(["."]);
    expect(readTool.permissions({ filePath: "new/not/yet.txt" }, ctx)[0]!.resources).toEqual(["new/not/yet.txt"]);
  });

  it("outside the workdir: external_directory for the parent directory, then the absolute path", () => {
    ws.write("secret.txt", "s", ws.outside);
    const projections = readTool.permissions({ filePath: "../outside/secret.txt" }, context(ws.workdir));
    expect(projections).toEqual([
      { action: "external_directory", resources: [`${ws.outside}/*`], save: [`${ws.outside}/*`] },
      { action: "read", resources: [join(ws.outside, "secret.txt")], save: [join(ws.outside, "secret.txt")], metadata: { canonicalPath: join(ws.outside, "secret.txt") } },
    ]);
    expect(projections.map((p) => evaluateProjection(p, {}).effect)).toEqual(["ask", "allow"]);
  });

  it("an outside directory projects itself as the external directory", () => {
    const projections = readTool.permissions({ filePath: ws.outside }, context(ws.workdir));
    expect(projections[0]).toEqual({ action: "external_directory", resources: [`${ws.outside}/*`], save: [`${ws.outside}/*`] });
  });

  it("a symlink escaping the workdir resolves to its target and projects external_directory", async () => {
    ws.write("secret.txt", "top secret\n", ws.outside);
    symlinkSync(ws.outside, join(ws.workdir, "escape"));
    symlinkSync(join(ws.outside, "secret.txt"), join(ws.workdir, "link.txt"));
    const ctx = context(ws.workdir);
    for (const filePath of ["escape/secret.txt", "link.txt"]) {
      const projections = readTool.permissions({ filePath }, ctx);
      expect(projections[0]).toEqual({ action: "external_directory", resources: [`${ws.outside}/*`], save: [`${ws.outside}/*`] });
      expect(projections[1]!.resources).toEqual([join(ws.outside, "secret.txt")]);
      expect(evaluateProjection(projections[0]!, {}).effect).toBe("ask");
    }
    // `..` after a symlink applies to the link target, as the OS does.
    mkdirSync(join(ws.outside, "deeper"));
    symlinkSync(join(ws.outside, "deeper"), join(ws.workdir, "deep"));
    expect(readTool.permissions({ filePath: "deep/../secret.txt" }, ctx)[1]!.resources).toEqual([join(ws.outside, "secret.txt")]);
    // A dangling link that points outside still resolves outside (a write would land there).
    symlinkSync(join(ws.outside, "later.txt"), join(ws.workdir, "dangling"));
    expect(readTool.permissions({ filePath: "dangling" }, ctx)[0]!.action).toBe("external_directory");
    // A symlink inside the workdir pointing inside stays relative.
    ws.write("real.txt", "r");
    symlinkSync(join(ws.workdir, "real.txt"), join(ws.workdir, "alias.txt"));
    expect(readTool.permissions({ filePath: "alias.txt" }, ctx)).toHaveLength(1);
    expect(readTool.permissions({ filePath: "alias.txt" }, ctx)[0]!.resources).toEqual(["real.txt"]);
  });

  it("symlink loops fail with invalid_path", () => {
    symlinkSync(join(ws.workdir, "loop-b"), join(ws.workdir, "loop-a"));
    symlinkSync(join(ws.workdir, "loop-a"), join(ws.workdir, "loop-b"));
    expect(() => readTool.permissions({ filePath: "loop-a/x" }, context(ws.workdir))).toThrow(ToolFailure);
  });

  it("a workdir reached through a symlink still reads relative", () => {
    symlinkSync(ws.workdir, join(ws.root, "work-link"));
    ws.write("a.txt", "");
    const projections = readTool.permissions({ filePath: "a.txt" }, context(join(ws.root, "work-link")));
    expect(projections).toEqual([{ action: "read", resources: ["a.txt"], save: ["a.txt"], metadata: { canonicalPath: join(ws.workdir, "a.txt") } }]);
  });

  it(".env reads ask, .env.example reads are allowed, other reads are allowed", () => {
    const ctx = context(ws.workdir);
    const effect = (filePath: string) => {
      const projections = readTool.permissions({ filePath }, ctx);
      return projections.map((p) => evaluateProjection(p, {}).effect);
    };
    expect(effect(".env")).toEqual(["ask"]);
    expect(effect("config/.env.local")).toEqual(["ask"]);
    expect(effect("prod.env")).toEqual(["ask"]);
    expect(effect(".env.example")).toEqual(["allow"]);
    expect(effect("app/.env.example")).toEqual(["allow"]);
    expect(effect("README.md")).toEqual(["allow"]);
    expect(effect(join(ws.outside, ".env"))).toEqual(["ask", "ask"]);
  });

  it("execute acts on the authorized canonical path, not a re-resolution", async () => {
    ws.write("a.txt", "authorized\n");
    ws.write("b.txt", "other\n");
    const ctx = context(ws.workdir, {
      permissions: [{ action: "read", resources: ["a.txt"], save: ["a.txt"], metadata: { canonicalPath: join(ws.workdir, "a.txt") } }],
    });
    const out = text(await readTool.execute({ filePath: "b.txt" }, ctx));
    expect(out).toContain("authorized");
  });
});
