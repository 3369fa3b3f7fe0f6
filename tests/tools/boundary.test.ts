// The file tools check what they actually opened (services/workspace/files/verified.ts): the
// legitimate symlink cases keep working — inside → inside reads and writes in place, inside →
// outside asks `external_directory` on the real target and then acts there — while a directory
// replaced by a symlink between the projection and the execution is `path_changed` with nothing
// read, created or left behind. The same holds on the portable fallback (no /proc/self/fd).
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { forceDescriptorPathsForTests } from "../../services/workspace/files/verified.js";
import { editTool, readTool, writeTool, type PermissionProjection, type ToolDefinition } from "../../services/tools/index.js";
import { call, context, expectCode, json, text, workspace, type Workspace } from "./helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => {
  ws.dispose();
  forceDescriptorPathsForTests(undefined);
});

/** Projects `input` now, then runs `between`, then executes with those projections (as Core would after an approval). */
async function authorizeThen<I>(tool: ToolDefinition<I>, input: I, between: () => void) {
  const ctx = context(ws.workdir);
  const permissions: PermissionProjection[] = tool.permissions(input, ctx);
  between();
  return tool.execute(input, { ...ctx, permissions });
}

/** `d` (holding `f`) swapped for a symlink to an outside directory holding its own `f`. */
function swapForOutsideLink(): void {
  renameSync(join(ws.workdir, "d"), join(ws.workdir, "d.real"));
  symlinkSync(ws.outside, join(ws.workdir, "d"));
}

for (const mode of ["descriptor paths", "portable fallback"] as const) {
  describe(`file tools on ${mode}`, () => {
    beforeEach(() => {
      if (mode === "portable fallback") forceDescriptorPathsForTests(false);
      ws.write("d/f", "inside TOKEN\n");
      ws.write("f", "OUTSIDE TOKEN\n", ws.outside);
    });

    it("read, write and edit through a symlink inside the workdir that points inside act on its target", async () => {
      symlinkSync(join(ws.workdir, "d"), join(ws.workdir, "dir-link"));
      symlinkSync("d/f", join(ws.workdir, "file-link"));
      const ctx = context(ws.workdir);
      expect(text(await call(readTool, { filePath: "file-link" }, ctx))).toContain("inside TOKEN");
      expect(json(await call(readTool, { filePath: "dir-link" }, ctx))).toMatchObject({ path: "d", entries: ["f"] });
      await call(editTool, { filePath: "dir-link/f", oldString: "TOKEN", newString: "EDITED" }, ctx);
      await call(writeTool, { filePath: "file-link", content: "written\n" }, ctx);
      await call(writeTool, { filePath: "dir-link/new/deep.txt", content: "deep\n" }, ctx);
      expect(ws.read("d/f")).toBe("written\n");
      expect(ws.read("d/new/deep.txt")).toBe("deep\n");
      expect(lstatSync(join(ws.workdir, "file-link")).isSymbolicLink()).toBe(true);
      expect(readdirSync(join(ws.workdir, "d")).sort()).toEqual(["f", "new"]);
    });

    it("a symlink inside pointing outside asks external_directory on its real target, then acts there", async () => {
      symlinkSync(ws.outside, join(ws.workdir, "out"));
      const ctx = context(ws.workdir);
      for (const tool of [readTool, editTool, writeTool] as ToolDefinition<{ filePath: string }>[]) {
        const projections = tool.permissions({ filePath: "out/f", oldString: "a", newString: "b", content: "" } as { filePath: string }, ctx);
        expect(projections[0]).toMatchObject({ action: "external_directory", resources: [`${ws.outside}/*`] });
        expect(projections[1]!.metadata).toEqual({ canonicalPath: join(ws.outside, "f") });
      }
      expect(text(await call(readTool, { filePath: "out/f" }, ctx))).toContain("OUTSIDE TOKEN");
      await call(editTool, { filePath: "out/f", oldString: "TOKEN", newString: "EDITED" }, ctx);
      expect(readFileSync(join(ws.outside, "f"), "utf8")).toBe("OUTSIDE EDITED\n");
    });

    it("a directory replaced by an outside symlink after the projection is path_changed for read, edit and write", async () => {
      const cases: [ToolDefinition<never>, Record<string, unknown>][] = [
        [readTool, { filePath: "d/f" }],
        [readTool, { filePath: "d" }],
        [editTool, { filePath: "d/f", oldString: "TOKEN", newString: "EDITED" }],
        [writeTool, { filePath: "d/f", content: "x" }],
        [writeTool, { filePath: "d/new.txt", content: "x" }],
        [writeTool, { filePath: "d/sub/new.txt", content: "x" }],
      ];
      for (const [tool, input] of cases) {
        await expectCode(authorizeThen(tool, input as never, swapForOutsideLink), "path_changed");
        // Undo the swap for the next case.
        rmSync(join(ws.workdir, "d"));
        renameSync(join(ws.workdir, "d.real"), join(ws.workdir, "d"));
      }
      // Nothing outside was changed or created; nothing was left behind inside.
      expect(readdirSync(ws.outside)).toEqual(["f"]);
      expect(readFileSync(join(ws.outside, "f"), "utf8")).toBe("OUTSIDE TOKEN\n");
      expect(readdirSync(join(ws.workdir, "d"))).toEqual(["f"]);
      expect(ws.read("d/f")).toBe("inside TOKEN\n");
    });
  });
}

describe("names no filesystem holds", () => {
  it("a name over 255 bytes is a typed invalid_path for read, write and edit", async () => {
    const ctx = context(ws.workdir);
    const long = "n".repeat(256);
    for (const filePath of [long, `dir/${long}`, `${long}/x`]) {
      await expectCode(call(readTool, { filePath }, ctx), "invalid_path");
      await expectCode(call(writeTool, { filePath, content: "x" }, ctx), "invalid_path");
      await expectCode(call(editTool, { filePath, oldString: "a", newString: "b" }, ctx), "invalid_path");
    }
    expect(readdirSync(ws.workdir)).toEqual([]);
  });

  it("writes and edits a file whose name is 255 bytes (the temporary name stays within the limit)", async () => {
    const ctx = context(ws.workdir);
    const name = `${"é".repeat(100)}${"n".repeat(55)}`; // 255 bytes, multibyte at the cut
    await call(writeTool, { filePath: name, content: "one\n" }, ctx);
    await call(editTool, { filePath: name, oldString: "one", newString: "two" }, ctx);
    expect(ws.read(name)).toBe("two\n");
    expect(readdirSync(ws.workdir)).toEqual([name]);
  });

  it("write into a parent that is a file is not_file and creates nothing", async () => {
    ws.write("plain", "x");
    await expectCode(call(writeTool, { filePath: "plain/child.txt", content: "x" }, context(ws.workdir)), "not_file");
    expect(existsSync(join(ws.workdir, "plain/child.txt"))).toBe(false);
    mkdirSync(join(ws.workdir, "adir"));
    await expectCode(call(writeTool, { filePath: "adir", content: "x" }, context(ws.workdir)), "not_file");
    writeFileSync(join(ws.workdir, "keep"), "k");
    expect(readdirSync(ws.workdir).sort()).toEqual(["adir", "keep", "plain"]);
  });
});
