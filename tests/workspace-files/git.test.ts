// gitStatus and gitDiff over real repositories made with isomorphic-git: unborn, staged +
// unstaged, renamed, binary, ignored and untracked files, and the features refused explicitly.
import { execFileSync } from "node:child_process";
import { chmodSync, statSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitDiff } from "../../services/workspace/git/diff.js";
import { gitStatus } from "../../services/workspace/git/status.js";
import { WorkspaceUnsupported } from "../../services/workspace/git/unsupported.js";
import { b64, initRepo, unb64 } from "./repos.js";

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "ze-git-")));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const paths = (entries: readonly { path: { bytesBase64: string }; change?: string }[]) =>
  entries.map((entry) => (entry.change ? `${entry.change} ${unb64(entry.path.bytesBase64)}` : unb64(entry.path.bytesBase64)));

async function unsupported(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkspaceUnsupported);
  return (error as WorkspaceUnsupported).body.feature;
}

describe("gitStatus", () => {
  it("is null outside a repository", async () => {
    expect(await gitStatus(base)).toBeNull();
    expect(await gitDiff(base, "worktree", b64("a.txt"))).toBeNull();
  });

  it("reports an unborn repository with a null head, its branch and staged additions", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("a.txt", "one\n");
    repo.write("b.txt", "two\n");
    await repo.add("a.txt");
    const status = await gitStatus(repo.dir);
    expect(status).toEqual({
      head: null,
      branch: "main",
      staged: [{ path: { bytesBase64: b64("a.txt") }, change: "added" }],
      worktree: [],
      untracked: [{ path: { bytesBase64: b64("b.txt") } }],
    });
    const diff = await gitDiff(repo.dir, "staged", b64("a.txt"));
    expect(diff).toMatchObject({ kind: "text", area: "staged", newMode: "100644" });
    expect(diff?.kind === "text" && diff.patch).toBe("diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+one\n");
    const untracked = await gitDiff(repo.dir, "untracked", b64("b.txt"));
    expect(untracked?.kind === "text" && untracked.patch).toContain("+two\n");
  });

  it("separates staged and worktree changes of one path, deletions, renames and ignored files", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("keep.txt", "1\n2\n3\n");
    repo.write("old.txt", "moving\n");
    repo.write("gone.txt", "bye\n");
    repo.write(".gitignore", "*.log\nbuild/\n");
    for (const path of ["keep.txt", "old.txt", "gone.txt", ".gitignore"]) await repo.add(path);
    const head = await repo.commit("first");
    repo.write("keep.txt", "1\nTWO\n3\n");
    await repo.add("keep.txt");
    repo.write("keep.txt", "1\nTWO\n3\nfour\n");
    repo.remove("old.txt");
    await repo.stageRemove("old.txt");
    repo.write("new.txt", "moving\n");
    await repo.add("new.txt");
    repo.remove("gone.txt");
    repo.write("debug.log", "ignored");
    repo.write("build/out.js", "ignored");
    repo.write("dir/fresh.txt", "untracked\n");
    const status = await gitStatus(repo.dir);
    expect(status?.head).toEqual({ oid: head });
    expect(paths(status!.staged)).toEqual(["modified keep.txt", "added new.txt", "deleted old.txt"]);
    expect(paths(status!.worktree)).toEqual(["deleted gone.txt", "modified keep.txt"]);
    expect(paths(status!.untracked)).toEqual(["dir/fresh.txt"]);

    const staged = await gitDiff(repo.dir, "staged", b64("keep.txt"));
    expect(staged?.kind === "text" && staged.patch).toBe("diff --git a/keep.txt b/keep.txt\n--- a/keep.txt\n+++ b/keep.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+TWO\n 3\n");
    const worktree = await gitDiff(repo.dir, "worktree", b64("keep.txt"));
    expect(worktree?.kind === "text" && worktree.patch).toContain(" 3\n+four\n");
    const deleted = await gitDiff(repo.dir, "worktree", b64("gone.txt"));
    expect(deleted?.kind === "text" && deleted.patch).toBe("diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n");
    expect(await gitDiff(repo.dir, "worktree", b64("new.txt"))).toMatchObject({ kind: "unchanged" });
    expect(await gitDiff(repo.dir, "staged", b64(".gitignore"))).toMatchObject({ kind: "unchanged" });
  });

  it("agrees with git itself when the git binary is there", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("a.txt", "a\n");
    repo.write("b/c.txt", "c\n");
    await repo.add("a.txt");
    await repo.add("b/c.txt");
    await repo.commit();
    repo.write("a.txt", "changed\n");
    repo.remove("b/c.txt");
    repo.write("d.txt", "d\n");
    const status = await gitStatus(repo.dir);
    let porcelain: string;
    try {
      porcelain = execFileSync("git", ["status", "--porcelain=v1", "-uall"], { cwd: repo.dir, env: { PATH: process.env["PATH"] ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: base } }).toString();
    } catch {
      return expect(status).not.toBeNull();
    }
    expect(porcelain).toBe(" M a.txt\n D b/c.txt\n?? d.txt\n");
    expect(paths(status!.worktree)).toEqual(["modified a.txt", "deleted b/c.txt"]);
    expect(paths(status!.untracked)).toEqual(["d.txt"]);
  });

  it("reports binary changes, mode changes and symlinks", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("image.bin", new Uint8Array([0, 1, 2, 3]));
    repo.write("run.sh", "echo hi\n");
    await repo.add("image.bin");
    await repo.add("run.sh");
    await repo.commit();
    repo.write("image.bin", new Uint8Array([0, 1, 2, 3, 4]));
    chmodSync(join(repo.dir, "run.sh"), 0o755);
    symlinkSync("run.sh", join(repo.dir, "link"));
    const status = await gitStatus(repo.dir);
    expect(paths(status!.worktree)).toEqual(["modified image.bin", "modified run.sh"]);
    expect(paths(status!.untracked)).toEqual(["link"]);
    expect(await gitDiff(repo.dir, "worktree", b64("image.bin"))).toEqual({
      kind: "binary", area: "worktree", path: { bytesBase64: b64("image.bin") }, oldMode: "100644", newMode: "100644", oldSize: 4, newSize: 5,
    });
    const mode = await gitDiff(repo.dir, "worktree", b64("run.sh"));
    expect(mode?.kind === "text" && mode.patch).toBe("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
    expect(await gitDiff(repo.dir, "untracked", b64("link"))).toMatchObject({ kind: "unsupported", reason: "symlink", newMode: "120000" });
  });

  it("refuses unsupported features explicitly and never writes the repository", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("a.txt", "a\n");
    await repo.add("a.txt");
    await repo.commit();
    writeFileSync(join(repo.dir, ".gitattributes"), "*.bin filter=lfs diff=lfs merge=lfs -text\n");
    expect(await unsupported(gitStatus(repo.dir))).toBe("external_filter");
    rmSync(join(repo.dir, ".gitattributes"));
    repo.write("nested/.gitattributes", "*.txt ident\n");
    expect(await unsupported(gitStatus(repo.dir))).toBe("text_conversion");
    rmSync(join(repo.dir, "nested"), { recursive: true });
    writeFileSync(join(repo.dir, ".gitmodules"), '[submodule "x"]\n\tpath = x\n');
    expect(await unsupported(gitStatus(repo.dir))).toBe("submodule");
    rmSync(join(repo.dir, ".gitmodules"));
    mkdirSync(join(repo.dir, ".git", "info"), { recursive: true });
    writeFileSync(join(repo.dir, ".git", "info", "sparse-checkout"), "/*\n");
    expect(await unsupported(gitStatus(repo.dir))).toBe("sparse_checkout");
    rmSync(join(repo.dir, ".git", "info", "sparse-checkout"));
    expect(await unsupported(gitStatus(mkdirSub(repo.dir)))).toBe("not_repository_root");
    const latin = Buffer.concat([Buffer.from(join(repo.dir, "n")), Buffer.from([0xff])]);
    writeFileSync(latin, "x");
    expect((await gitStatus(repo.dir))!.untracked).toContainEqual({ path: { bytesBase64: Buffer.from("n\xff", "latin1").toString("base64") } });
    rmSync(latin);
    const before = execIndexMtime(repo.dir);
    repo.write("a.txt", "a\n"); // same content, new stat: git would refresh the index here
    await gitStatus(repo.dir);
    expect(execIndexMtime(repo.dir)).toBe(before);
  });

  it("refuses a diff of bad paths and of the wrong area", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("a.txt", "a\n");
    await repo.add("a.txt");
    for (const bad of ["", b64("/etc/passwd"), b64("../x"), b64("a/./b"), "not base64!", b64("a\0b")]) {
      await expect(gitDiff(repo.dir, "worktree", bad)).rejects.toMatchObject({ body: { _tag: "ValidationError" } });
    }
    await expect(gitDiff(repo.dir, "elsewhere", b64("a.txt"))).rejects.toMatchObject({ body: { _tag: "ValidationError" } });
    await expect(gitDiff(repo.dir, "untracked", b64("a.txt"))).rejects.toMatchObject({ body: { _tag: "ConflictError" } });
  });
});

function mkdirSub(dir: string): string {
  mkdirSync(join(dir, "sub"), { recursive: true });
  return join(dir, "sub");
}

function execIndexMtime(dir: string): number {
  return statSync(join(dir, ".git", "index")).mtimeMs;
}
