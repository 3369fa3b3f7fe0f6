// The fast gitStatus (index stat data, HEAD tree oids, one worktree walk) on its edge cases —
// racy entries, trusted stat data, mode-only and same-size changes, type changes, ignored
// directories, deletions, an unmerged index falling back — and against the general
// isomorphic-git walk (gitStatusByWalk) on random repositories.
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import git from "isomorphic-git";
import * as fs from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fastStatus } from "../../services/workspace/git/fast.js";
import { ObjectReader } from "../../services/workspace/git/objects.js";
import { fileModeTrusted, locateRepository } from "../../services/workspace/git/repository.js";
import { gitStatus } from "../../services/workspace/git/status.js";
import { gitStatusByWalk } from "../../services/workspace/git/status-walk.js";
import { b64, initRepo, unb64, type TestRepo } from "./repos.js";
import { recordStat, setStage } from "./index-patch.js";
import { randomRepository } from "./random-repo.js";

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "ze-gitfast-")));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const paths = (entries: readonly { path: { bytesBase64: string }; change?: string }[]) =>
  entries.map((entry) => (entry.change ? `${entry.change} ${unb64(entry.path.bytesBase64)}` : unb64(entry.path.bytesBase64)));

/** The fast path's own answer (never the fallback), checked against the general walk. */
async function fast(dir: string) {
  const repo = (await locateRepository(dir))!;
  const status = await fastStatus(repo, await fileModeTrusted(repo));
  expect(status).toBeDefined();
  expect(status).toEqual(await gitStatusByWalk(dir));
  expect(await gitStatus(dir)).toEqual(status);
  return status!;
}

async function committed(files: Record<string, string>): Promise<TestRepo> {
  const repo = await initRepo(join(base, "r"));
  for (const [path, content] of Object.entries(files)) {
    repo.write(path, content);
    await git.add({ fs, dir: repo.dir, filepath: path, force: true });
  }
  await repo.commit();
  return repo;
}

const hourAgo = (): number => Date.now() / 1000 - 3600;

describe("fast gitStatus", () => {
  it("hashes a racy entry (not older than the index) even when its stat data matches", async () => {
    const repo = await committed({ "a.txt": "aaa\n" });
    repo.write("a.txt", "bbb\n"); // same size, other content
    const future = Date.now() / 1000 + 3600;
    utimesSync(join(repo.dir, "a.txt"), future, future);
    recordStat(repo.dir, "a.txt"); // the entry now carries this file's stat, the old oid, a future mtime
    expect(paths((await fast(repo.dir)).worktree)).toEqual(["modified a.txt"]);
    repo.write("a.txt", "aaa\n"); // racy again, same content: unchanged
    utimesSync(join(repo.dir, "a.txt"), future, future);
    recordStat(repo.dir, "a.txt", true);
    expect((await fast(repo.dir)).worktree).toEqual([]);
  });

  it("trusts matching stat data of an entry older than the index, as git does, whichever way the nanoseconds were written", async () => {
    const repo = await committed({ "a.txt": "aaa\n", "b.txt": "bbb\n" });
    for (const [path, exact] of [["a.txt", false], ["b.txt", true]] as const) {
      repo.write(path, "zzz\n");
      utimesSync(join(repo.dir, path), hourAgo(), hourAgo());
      recordStat(repo.dir, path, exact);
    }
    const repository = (await locateRepository(repo.dir))!;
    // The stat data vouches for both files, so neither is read (the content did change).
    expect((await fastStatus(repository, true))!.worktree).toEqual([]);
    // The general walk only trusts isomorphic-git's way of writing nanoseconds.
    expect(paths((await gitStatusByWalk(repo.dir))!.worktree)).toEqual(["modified b.txt"]);
  });

  it("reports a mode-only change unless core.filemode is false, and a same-size change with a touched or restored mtime", async () => {
    const repo = await committed({ "run.sh": "echo\n", "same.txt": "12345\n", "back.txt": "abcde\n" });
    for (const path of ["run.sh", "same.txt", "back.txt"]) utimesSync(join(repo.dir, path), hourAgo(), hourAgo());
    for (const path of ["run.sh", "same.txt", "back.txt"]) recordStat(repo.dir, path); // trusted entries
    expect((await fast(repo.dir)).worktree).toEqual([]);
    chmodSync(join(repo.dir, "run.sh"), 0o755);
    repo.write("same.txt", "54321\n");
    const recorded = lstatSync(join(repo.dir, "back.txt"));
    repo.write("back.txt", "edcba\n");
    utimesSync(join(repo.dir, "back.txt"), recorded.atime, recorded.mtime); // mtime restored; ctime moved
    expect(paths((await fast(repo.dir)).worktree)).toEqual(["modified back.txt", "modified run.sh", "modified same.txt"]);
    await git.setConfig({ fs, dir: repo.dir, path: "core.filemode", value: false });
    expect(paths((await fast(repo.dir)).worktree)).toEqual(["modified back.txt", "modified same.txt"]);
  });

  it("reports a file replaced by a symlink or a directory, a deleted file, and the staged side of each", async () => {
    const repo = await committed({ "link.txt": "target\n", "dir.txt": "d\n", "gone.txt": "g\n", "staged-gone.txt": "s\n", "keep/x.txt": "x\n" });
    repo.remove("link.txt");
    symlinkSync("keep/x.txt", join(repo.dir, "link.txt"));
    repo.remove("dir.txt");
    repo.write("dir.txt/inner.txt", "now a directory\n");
    repo.remove("gone.txt");
    repo.remove("staged-gone.txt");
    await repo.stageRemove("staged-gone.txt");
    let status = await fast(repo.dir);
    expect(paths(status.worktree)).toEqual(["deleted dir.txt", "deleted gone.txt", "typeChanged link.txt"]);
    expect(paths(status.staged)).toEqual(["deleted staged-gone.txt"]);
    expect(paths(status.untracked)).toEqual(["dir.txt/inner.txt"]);
    await repo.add("link.txt");
    status = await fast(repo.dir);
    expect(paths(status.staged)).toEqual(["typeChanged link.txt", "deleted staged-gone.txt"]);
    expect(paths(status.worktree)).toEqual(["deleted dir.txt", "deleted gone.txt"]);
  });

  it("leaves ignored directories of many files out, reading them no deeper than the general walk", async () => {
    const repo = await committed({ ".gitignore": "node_modules/\n!node_modules/keep.js\n*.tmp\nvendor\n", "src/a.ts": "a\n" });
    for (let i = 0; i < 300; i++) repo.write(`node_modules/pkg${i % 20}/lib/file${i}.js`, `${i}\n`);
    for (let i = 0; i < 100; i++) repo.write(`vendor/v${i % 10}/file${i}.js`, `${i}\n`);
    repo.write("node_modules/keep.js", "cannot be re-included\n");
    // Names that are not UTF-8 below what an ignore check stops at are never read: "vendor"
    // itself is ignored; for "node_modules/" (a directory pattern) each package is.
    writeFileSync(Buffer.concat([Buffer.from(join(repo.dir, "vendor", "v1", "n")), Buffer.from([0xff])]), "x");
    writeFileSync(Buffer.concat([Buffer.from(join(repo.dir, "node_modules", "pkg1", "lib", "n")), Buffer.from([0xff])]), "x");
    repo.write("src/scratch.tmp", "ignored\n");
    repo.write("src/new.ts", "new\n");
    mkdirSync(join(repo.dir, "empty"));
    const status = await fast(repo.dir);
    expect(paths(status.untracked)).toEqual(["src/new.ts"]);
    expect(status.worktree).toEqual([]);
    expect(status.staged).toEqual([]);
  });

  it("asks about ignores exactly where the general walk does", async () => {
    const repo = await committed({ ".gitignore": "out\n*.bak\n", "out/a.txt": "a\n", "notes.bak": "tracked before the rule\n", "dir/x.txt": "x\n" });
    // HEAD has a directory "out", the index nothing there, the worktree an ignored file: left out.
    await repo.stageRemove("out/a.txt");
    repo.remove("out");
    repo.write("out", "now a file\n");
    // HEAD has the file, the index no longer: untracked, ignored or not.
    await repo.stageRemove("notes.bak");
    // The index has a directory "dir" HEAD also has; an ignored new file inside is left out.
    repo.write("dir/y.bak", "ignored\n");
    const status = await fast(repo.dir);
    expect(paths(status.staged)).toEqual(["deleted notes.bak", "deleted out/a.txt"]);
    expect(paths(status.untracked)).toEqual(["notes.bak"]);
    expect(status.worktree).toEqual([]);
  });

  it("takes the general walk for an unmerged index and agrees with it", async () => {
    const repo = await committed({ "a.txt": "a\n", "b.txt": "b\n" });
    setStage(repo.dir, "a.txt", 2);
    const repository = (await locateRepository(repo.dir))!;
    expect(await fastStatus(repository, true)).toBeUndefined();
    expect(await gitStatus(repo.dir)).toEqual(await gitStatusByWalk(repo.dir));
  });

  it("keeps exact name bytes, a null head in an unborn repository and the branch", async () => {
    const repo = await initRepo(join(base, "r"));
    repo.write("ünïcödé/naïve.txt", "x\n");
    repo.write("z z.txt", "y\n");
    await repo.add("ünïcödé/naïve.txt");
    const status = await fast(repo.dir);
    expect(status).toEqual({
      head: null,
      branch: "main",
      staged: [{ path: { bytesBase64: b64("ünïcödé/naïve.txt") }, change: "added" }],
      worktree: [],
      untracked: [{ path: { bytesBase64: b64("z z.txt") } }],
    });
  });

  it("reads an index the git binary wrote (exact nanoseconds, cache-tree extension) when git is there", async () => {
    const dir = join(base, "g");
    mkdirSync(dir);
    const env = { PATH: process.env["PATH"] ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: base, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
    const run = (...args: string[]): string => execFileSync("git", args, { cwd: dir, env }).toString();
    try {
      run("init", "-q", "-b", "main");
    } catch {
      return expect(await gitStatus(dir)).toBeNull(); // no git binary: the directory is no repository
    }
    for (let i = 0; i < 40; i++) writeFileSync(join(dir, `f${i}.txt`), `${i}\n`);
    mkdirSync(join(dir, "sub"));
    for (let i = 0; i < 10; i++) writeFileSync(join(dir, "sub", `s${i}.txt`), `${i}\n`);
    for (const name of ["f1.txt", "sub/s1.txt"]) utimesSync(join(dir, name), hourAgo(), hourAgo());
    run("add", ".");
    run("commit", "-q", "-m", "first");
    writeFileSync(join(dir, "f2.txt"), "changed\n");
    writeFileSync(join(dir, "sub", "s3.txt"), "staged\n");
    run("add", "sub/s3.txt");
    writeFileSync(join(dir, "new.txt"), "new\n");
    const status = await fast(dir);
    expect(paths(status.staged)).toEqual(["modified sub/s3.txt"]);
    expect(paths(status.worktree)).toEqual(["modified f2.txt"]);
    expect(paths(status.untracked)).toEqual(["new.txt"]);
    expect(run("status", "--porcelain=v1", "-uall")).toBe(" M f2.txt\nM  sub/s3.txt\n?? new.txt\n");
  });

  it("reads packed commits and trees itself, deltas by offset and by reference, as isomorphic-git does", async () => {
    const dir = join(base, "p");
    mkdirSync(dir);
    const env = { PATH: process.env["PATH"] ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: base, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
    const run = (...args: string[]): string => execFileSync("git", args, { cwd: dir, env }).toString();
    try {
      run("init", "-q", "-b", "main");
    } catch {
      return expect(new ObjectReader(join(dir, ".git"))).toBeDefined(); // no git binary, nothing to pack with
    }
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 30; i++) writeFileSync(join(dir, `f${i}.txt`), `${"line\n".repeat(50)}${i} ${round % 2 === 0 || i % 3 ? "" : round}\n`);
      mkdirSync(join(dir, `d${round}`, "deep"), { recursive: true });
      writeFileSync(join(dir, `d${round}`, "deep", "x.txt"), `${round}\n`);
      run("add", ".");
      run("commit", "-q", "-m", `round ${round}`);
    }
    for (const offsets of ["true", "false"]) {
      run("-c", `repack.useDeltaBaseOffset=${offsets}`, "repack", "-q", "-a", "-d", "-f", "--depth=8");
      const objects = run("rev-list", "--objects", "--all").split("\n").filter(Boolean).map((line) => line.slice(0, 40));
      expect(objects.length).toBeGreaterThan(40);
      expect(run("count-objects", "-v")).toMatch(/^count: 0$/m); // all packed
      const reader = new ObjectReader(join(dir, ".git"));
      try {
        for (const oid of objects) {
          const mine = await reader.read(oid);
          const theirs = await git.readObject({ fs, dir, oid, format: "content" });
          expect(mine?.type, oid).toBe(theirs.type);
          expect(Buffer.compare(mine!.content, Buffer.from(theirs.object as Uint8Array)), oid).toBe(0);
        }
      } finally {
        await reader.close();
      }
      // The pack does hold delta chains.
      expect(execFileSync("sh", ["-c", "git verify-pack -v .git/objects/pack/*.idx"], { cwd: dir, env }).toString()).toMatch(/^chain length = [1-9]/m);
    }
    writeFileSync(join(dir, "f1.txt"), "changed\n");
    run("add", "f1.txt");
    rmSync(join(dir, "d2"), { recursive: true });
    const status = await fast(dir);
    expect(paths(status.staged)).toEqual(["modified f1.txt"]);
    expect(paths(status.worktree)).toEqual(["deleted d2/deep/x.txt"]);
  });

  it("stops with the signal's reason once cancelled", async () => {
    const repo = await committed({ "a.txt": "a\n" });
    const controller = new AbortController();
    controller.abort(new Error("observation cancelled by the test"));
    await expect(gitStatus(repo.dir, controller.signal)).rejects.toThrow("observation cancelled by the test");
    const repository = (await locateRepository(repo.dir))!;
    await expect(fastStatus(repository, true, controller.signal)).rejects.toThrow("observation cancelled by the test");
  });

  it("agrees with the general walk on random repositories", async () => {
    const totals = { fast: 0, staged: 0, worktree: 0, untracked: 0 };
    const seeds = 16;
    for (let seed = 1; seed <= seeds; seed++) {
      const dir = join(base, `random-${seed}`);
      await randomRepository(dir, seed);
      const repo = (await locateRepository(dir))!;
      const quick = await fastStatus(repo, await fileModeTrusted(repo));
      const walked = await gitStatusByWalk(dir);
      expect(await gitStatus(dir)).toEqual(walked);
      // An index holding a path both as a file and as a directory (isomorphic-git's add can
      // write one; git never does) is left to the walk.
      if (quick === undefined) continue;
      expect(quick, `seed ${seed}`).toEqual(walked);
      totals.fast++;
      totals.staged += quick.staged.length;
      totals.worktree += quick.worktree.length;
      totals.untracked += quick.untracked.length;
    }
    expect(totals.fast).toBeGreaterThanOrEqual(seeds - 4);
    // The repositories exercise every area.
    expect(totals.staged).toBeGreaterThan(20);
    expect(totals.worktree).toBeGreaterThan(20);
    expect(totals.untracked).toBeGreaterThan(20);
  });
});
