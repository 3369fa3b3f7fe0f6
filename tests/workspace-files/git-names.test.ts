// gitStatus and gitDiff on file names that are not UTF-8 (agent-api.md: "Paths use exact Git
// pathname bytes encoded as bytesBase64"): a real repository made by the git binary in a temp
// directory, its files created with Buffer paths — Latin-1 names, invalid UTF-8 sequences, a
// directory so named — staged and unstaged, deleted, untracked and ignored by a byte pattern.
// Each answer is checked against git's own (`git diff`, `git ls-files`).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitDiff } from "../../services/workspace/git/diff.js";
import { gitStatus } from "../../services/workspace/git/status.js";

let dir: string;
const env = { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", LC_ALL: "C" };
const gitIn = (...args: string[]): Buffer => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir, env });

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "ze-git-names-")));
  gitIn("init", "-q", "-b", "main");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (text: string): Buffer => Buffer.from(text, "latin1");
const at = (name: Buffer): Buffer => Buffer.concat([Buffer.from(`${dir}/`), name]);
const write = (name: Buffer, content: string): void => writeFileSync(at(name), content);
const encoded = (name: Buffer) => ({ bytesBase64: name.toString("base64") });
const sorted = (names: Buffer[]): Buffer[] => [...names].sort(Buffer.compare);

const cafe = bytes("caf\xe9.txt"); // Latin-1 é
const invalid = bytes("bad\xff\xfe.txt"); // never valid UTF-8
const folder = bytes("d\xe9r"); // a directory so named
const inner = Buffer.concat([folder, Buffer.from("/inner.txt")]);
const utf8 = Buffer.from("ok-é.txt", "utf8");
const added = bytes("added\xfc.txt");
const fresh = bytes("new\xe0.txt");
const ignoredByte = bytes("ign\xe9-me.txt");

/** The line of `git diff` (or `git diff --cached`) output that starts the given file's patch. */
function gitHeader(cached: boolean, name: string): string {
  const out = gitIn("diff", ...(cached ? ["--cached"] : [])).toString("latin1");
  const line = out.split("\n").find((candidate) => candidate.startsWith("diff --git") && candidate.includes(name));
  if (!line) throw new Error(`git diff has no patch for ${name}: ${out}`);
  return line;
}

describe("git names that are not UTF-8", () => {
  it("status reports them with their exact bytes in every area; diff reads them staged, worktree and untracked", async () => {
    mkdirSync(at(folder));
    for (const name of [cafe, invalid, inner, utf8]) write(name, "one\n");
    writeFileSync(join(dir, ".gitignore"), Buffer.concat([bytes("ign\xe9*\n")]));
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "names");

    write(invalid, "staged\n");
    write(added, "added\n");
    gitIn("add", "-A");
    write(invalid, "worktree\n"); // staged and worktree
    write(cafe, "two\n"); // worktree only
    unlinkSync(at(inner)); // worktree deletion inside the oddly named directory
    write(fresh, "fresh\n"); // untracked
    write(ignoredByte, "ignored by a byte pattern\n");

    const status = (await gitStatus(dir))!;
    expect(status.staged).toEqual(sorted([added, invalid]).map((name) => ({ path: encoded(name), change: name === added ? "added" : "modified" })));
    expect(status.worktree).toEqual(
      sorted([cafe, invalid, inner]).map((name) => ({ path: encoded(name), change: name === inner ? "deleted" : "modified" })),
    );
    expect(status.untracked).toEqual([{ path: encoded(fresh) }]);
    // git agrees on what is untracked (the byte pattern ignores ign\xe9-me.txt for both).
    const gitUntracked = gitIn("ls-files", "--others", "--exclude-standard", "-z").toString("latin1").split("\0").filter(Boolean);
    expect(gitUntracked).toEqual([fresh.toString("latin1")]);

    const staged = (await gitDiff(dir, "staged", invalid.toString("base64")))!;
    expect(staged).toMatchObject({ kind: "text", area: "staged", path: encoded(invalid), oldMode: "100644", newMode: "100644" });
    const stagedPatch = (staged as { patch: string }).patch;
    expect(stagedPatch.split("\n")[0]).toBe(gitHeader(true, "bad"));
    expect(stagedPatch.split("\n")[0]).toBe('diff --git "a/bad\\377\\376.txt" "b/bad\\377\\376.txt"');
    expect(stagedPatch).toContain("\n-one\n+staged\n");

    const worktree = (await gitDiff(dir, "worktree", invalid.toString("base64")))!;
    expect((worktree as { patch: string }).patch).toContain("\n-staged\n+worktree\n");
    const latin = (await gitDiff(dir, "worktree", cafe.toString("base64")))!;
    expect((latin as { patch: string }).patch.split("\n")[0]).toBe(gitHeader(false, "caf"));
    expect((latin as { patch: string }).patch).toContain("\n-one\n+two\n");
    const gone = (await gitDiff(dir, "worktree", inner.toString("base64")))!;
    expect(gone).toMatchObject({ kind: "text", oldMode: "100644" });
    expect((gone as { patch: string }).patch).toContain("\n+++ /dev/null\n");
    expect((gone as { patch: string }).patch.split("\n")[0]).toBe(gitHeader(false, "inner"));
    const created = (await gitDiff(dir, "staged", added.toString("base64")))!;
    expect((created as { patch: string }).patch).toContain('\n--- /dev/null\n+++ "b/added\\374.txt"\n');

    const untracked = (await gitDiff(dir, "untracked", fresh.toString("base64")))!;
    expect(untracked).toMatchObject({ kind: "text", area: "untracked", newMode: "100644" });
    expect((untracked as { patch: string }).patch).toContain('\n--- /dev/null\n+++ "b/new\\340.txt"\n@@ -0,0 +1');
    expect((untracked as { patch: string }).patch.endsWith("\n+fresh\n")).toBe(true);
    // An ignored file diffs as unchanged; a UTF-8 name is quoted as git quotes it.
    expect(await gitDiff(dir, "untracked", ignoredByte.toString("base64"))).toMatchObject({ kind: "unchanged" });
    expect(await gitDiff(dir, "worktree", utf8.toString("base64"))).toMatchObject({ kind: "unchanged" });
    write(utf8, "changed\n");
    expect(((await gitDiff(dir, "worktree", utf8.toString("base64"))) as { patch: string }).patch.split("\n")[0]).toBe(gitHeader(false, "ok-"));
    // The tracked one is a conflict in the untracked area, named readably.
    await expect(gitDiff(dir, "untracked", cafe.toString("base64"))).rejects.toMatchObject({ body: { _tag: "ConflictError" } });
  });

  it("a clean repository of such names has no changes, and reading them changes nothing", async () => {
    for (const name of [cafe, invalid, added]) write(name, "same\n");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "clean");
    const index = gitIn("ls-files", "-s", "-z");
    const status = (await gitStatus(dir))!;
    expect(status).toMatchObject({ staged: [], worktree: [], untracked: [], branch: "main" });
    expect(await gitDiff(dir, "worktree", cafe.toString("base64"))).toMatchObject({ kind: "unchanged" });
    expect(gitIn("ls-files", "-s", "-z").equals(index)).toBe(true);
  });
});
