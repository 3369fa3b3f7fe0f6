import { execFileSync } from "node:child_process";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_FILE_READ_BYTES } from "../../services/tools/tool.js";
import {
  MAX_INSTRUCTIONS_BYTES,
  discoverNestedInstructions,
  loadWorkspaceInstructions,
  readWorkspaceInstructions,
  renderInstructionFile,
  type InstructionRead,
} from "../../services/workspace/instructions.js";
import { withoutRootPrivileges } from "../support/other-user.js";
import { tree, type Tree } from "./fs-tree.js";

let t: Tree;
let work: string;
beforeEach(() => {
  t = tree();
  work = t.mkdir("work");
});
afterEach(() => t.dispose());

const at = (relative: string): string => join(work, relative);
const write = (relative: string, content: string | Buffer): string => t.write(`work/${relative}`, content);

describe("loadWorkspaceInstructions (prompt admission)", () => {
  it("uses the workspace text-read limit of the read tool", () => {
    expect(MAX_INSTRUCTIONS_BYTES).toBe(MAX_FILE_READ_BYTES);
    expect(MAX_INSTRUCTIONS_BYTES).toBe(51_200);
  });

  it("loads a non-empty AGENTS.md, fresh on every call", async () => {
    const file = write("AGENTS.md", "Use tabs.\n");
    expect(await loadWorkspaceInstructions(work)).toEqual({ _tag: "InstructionFile", path: "AGENTS.md", canonicalPath: file, content: "Use tabs.\n" });
    writeFileSync(file, "Use spaces.");
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ content: "Use spaces." });
    rmSync(file);
    expect(await loadWorkspaceInstructions(work)).toBeUndefined();
  });

  it("absent, empty and whitespace-only files mean no instructions", async () => {
    expect(await loadWorkspaceInstructions(work)).toBeUndefined();
    write("AGENTS.md", "");
    expect(await loadWorkspaceInstructions(work)).toBeUndefined();
    write("AGENTS.md", " \n\t\n");
    expect(await loadWorkspaceInstructions(work)).toBeUndefined();
  });

  it("accepts exactly the limit and rejects one byte more as oversized", async () => {
    write("AGENTS.md", "a".repeat(MAX_INSTRUCTIONS_BYTES));
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ _tag: "InstructionFile" });
    const file = write("AGENTS.md", "a".repeat(MAX_INSTRUCTIONS_BYTES + 1));
    expect(await loadWorkspaceInstructions(work)).toEqual({
      _tag: "InstructionFileInvalid",
      path: "AGENTS.md",
      canonicalPath: file,
      reason: "oversized",
      message: `AGENTS.md cannot be applied: it is larger than ${MAX_INSTRUCTIONS_BYTES} bytes.`,
    });
  });

  it("rejects a file that is not UTF-8, and drops a byte-order mark from a valid one", async () => {
    write("AGENTS.md", Buffer.from([0x48, 0x69, 0xc3, 0x28]));
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ _tag: "InstructionFileInvalid", reason: "not_utf8", message: "AGENTS.md cannot be applied: it is not UTF-8 text." });
    write("AGENTS.md", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("Häkchen")]));
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ _tag: "InstructionFile", content: "Häkchen" });
  });

  it("reports unreadable files: a directory, a symlink loop, a FIFO", async () => {
    t.mkdir("work/AGENTS.md");
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ _tag: "InstructionFileInvalid", reason: "unreadable", message: "AGENTS.md cannot be applied: it is a directory." });
    rmSync(at("AGENTS.md"), { recursive: true });
    t.link("work/AGENTS.md", "AGENTS.md");
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ reason: "unreadable", message: "AGENTS.md cannot be applied: too many symbolic links." });
    rmSync(at("AGENTS.md"));
    execFileSync("mkfifo", [at("AGENTS.md")]);
    // Opening a FIFO without a writer would block; the reader must not hang.
    expect(await loadWorkspaceInstructions(work)).toMatchObject({ reason: "unreadable", message: "AGENTS.md cannot be applied: it is not a regular file." });
  });

  it("reports a file without read permission (as root: with the effective user switched to nobody)", async () => {
    chmodSync(write("AGENTS.md", "secret"), 0o000);
    expect(await withoutRootPrivileges(t.root, () => loadWorkspaceInstructions(work))).toMatchObject({ reason: "unreadable", message: "AGENTS.md cannot be applied: permission denied." });
  });

  it("follows a symlinked AGENTS.md and a symlinked workdir, naming the canonical file", async () => {
    const shared = t.write("shared/AGENTS.md", "Shared rules.");
    t.link("work/AGENTS.md", shared);
    const alias = t.link("alias", work);
    expect(await loadWorkspaceInstructions(alias)).toEqual({ _tag: "InstructionFile", path: "AGENTS.md", canonicalPath: shared, content: "Shared rules." });
  });

  it("renders the developer instruction text", () => {
    expect(renderInstructionFile({ _tag: "InstructionFile", path: "AGENTS.md", canonicalPath: "/w/AGENTS.md", content: "\nUse tabs.\n" })).toBe(
      "Instructions from AGENTS.md in the working directory:\n\nUse tabs.",
    );
    expect(renderInstructionFile({ _tag: "InstructionFile", path: "pkg/AGENTS.md", canonicalPath: "/w/pkg/AGENTS.md", content: "Nested." })).toBe("Instructions from pkg/AGENTS.md:\n\nNested.");
  });

  it("keeps the lenient readWorkspaceInstructions until the Turn loop switches", () => {
    write("AGENTS.md", "a".repeat(MAX_INSTRUCTIONS_BYTES + 10));
    expect(readWorkspaceInstructions(work)).toMatch(/\[AGENTS\.md truncated at 51200 bytes\]$/);
  });
});

describe("discoverNestedInstructions", () => {
  const paths = (found: readonly InstructionRead[]): string[] => found.map((file) => file.path);

  beforeEach(() => {
    write("AGENTS.md", "root");
    write("a/AGENTS.md", "A");
    write("a/b/AGENTS.md", "B");
    write("a/b/c/file.ts", "code");
  });

  it("lists the files between a file target and the workdir, nearest-first, without the workdir's own", async () => {
    const found = await discoverNestedInstructions(work, at("a/b/c/file.ts"), { isDirectory: false });
    expect(found).toEqual([
      { _tag: "InstructionFile", path: "a/b/AGENTS.md", canonicalPath: at("a/b/AGENTS.md"), content: "B" },
      { _tag: "InstructionFile", path: "a/AGENTS.md", canonicalPath: at("a/AGENTS.md"), content: "A" },
    ]);
  });

  it("a directory target includes its own AGENTS.md", async () => {
    expect(paths(await discoverNestedInstructions(work, at("a/b"), { isDirectory: true }))).toEqual(["a/b/AGENTS.md", "a/AGENTS.md"]);
    expect(paths(await discoverNestedInstructions(work, at("a/b/c"), { isDirectory: true }))).toEqual(["a/b/AGENTS.md", "a/AGENTS.md"]);
    // The same path read as a file only looks from its parent up.
    expect(paths(await discoverNestedInstructions(work, at("a/b"), { isDirectory: false }))).toEqual(["a/AGENTS.md"]);
  });

  it("gives nothing for the workdir itself, a file directly in it, or the root AGENTS.md", async () => {
    expect(await discoverNestedInstructions(work, work, { isDirectory: true })).toEqual([]);
    expect(await discoverNestedInstructions(work, at("README.md"), { isDirectory: false })).toEqual([]);
    expect(await discoverNestedInstructions(work, at("AGENTS.md"), { isDirectory: false })).toEqual([]);
  });

  it("does not list a target that is itself a nested AGENTS.md, but lists its ancestors", async () => {
    expect(paths(await discoverNestedInstructions(work, at("a/b/AGENTS.md"), { isDirectory: false }))).toEqual(["a/AGENTS.md"]);
  });

  it("gives nothing for targets outside the workdir, including a sibling sharing its prefix", async () => {
    t.write("outside/AGENTS.md", "outside");
    t.write("outside/x/AGENTS.md", "outside x");
    t.write("work2/d/AGENTS.md", "sibling");
    expect(await discoverNestedInstructions(work, t.path("outside/x/y.txt"), { isDirectory: false })).toEqual([]);
    expect(await discoverNestedInstructions(work, t.path("work2/d/e.txt"), { isDirectory: false })).toEqual([]);
    expect(await discoverNestedInstructions(work, t.root, { isDirectory: true })).toEqual([]);
  });

  it("skips empty files and reports broken ones in place without stopping", async () => {
    write("a/b/AGENTS.md", "   ");
    write("a/b/c/AGENTS.md", Buffer.from([0xff]));
    write("a/AGENTS.md", "x".repeat(MAX_INSTRUCTIONS_BYTES + 1));
    write("a/b/c/d/AGENTS.md", "D");
    const found = await discoverNestedInstructions(work, at("a/b/c/d/e.txt"), { isDirectory: false });
    expect(found.map((f) => [f.path, f._tag === "InstructionFileInvalid" ? f.reason : f.content])).toEqual([
      ["a/b/c/d/AGENTS.md", "D"],
      ["a/b/c/AGENTS.md", "not_utf8"],
      ["a/AGENTS.md", "oversized"],
    ]);
    expect(found[1]).toMatchObject({ message: "a/b/c/AGENTS.md cannot be applied: it is not UTF-8 text." });
  });

  it("refuses a nested AGENTS.md that links outside the workdir, without reading it", async () => {
    const secret = t.write("outside/secret.md", "outside content");
    rmSync(at("a/b/AGENTS.md"));
    t.link("work/a/b/AGENTS.md", secret);
    const found = await discoverNestedInstructions(work, at("a/b/c/file.ts"), { isDirectory: false });
    expect(found[0]).toEqual({
      _tag: "InstructionFileInvalid",
      path: "a/b/AGENTS.md",
      canonicalPath: secret,
      reason: "outside_workdir",
      message: "a/b/AGENTS.md cannot be applied: it links to a file outside the working directory.",
    });
    expect(JSON.stringify(found)).not.toContain("outside content");
    expect(found[1]).toMatchObject({ _tag: "InstructionFile", path: "a/AGENTS.md" });
  });

  it("accepts a nested link that stays inside, and a workdir given through a symlink", async () => {
    write("shared/rules.md", "Shared.");
    rmSync(at("a/b/AGENTS.md"));
    t.link("work/a/b/AGENTS.md", "../../shared/rules.md");
    const alias = t.link("alias", work);
    const found = await discoverNestedInstructions(alias, at("a/b/c/file.ts"), { isDirectory: false });
    expect(found[0]).toEqual({ _tag: "InstructionFile", path: "a/b/AGENTS.md", canonicalPath: at("shared/rules.md"), content: "Shared." });
    expect(paths(found)).toEqual(["a/b/AGENTS.md", "a/AGENTS.md"]);
  });

  it("a dangling nested link counts as absent", async () => {
    rmSync(at("a/AGENTS.md"));
    t.link("work/a/AGENTS.md", at("missing.md"));
    expect(paths(await discoverNestedInstructions(work, at("a/b/c/file.ts"), { isDirectory: false }))).toEqual(["a/b/AGENTS.md"]);
  });
});
