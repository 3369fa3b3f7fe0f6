// A random (seeded, reproducible) repository for comparing the fast gitStatus with the general
// walk: nested files, executables, symlinks, `.gitignore`s at two levels and info/exclude, a
// commit, then random edits (same-size or not, mtimes old and new), mode flips, deletions,
// type changes (file ↔ symlink ↔ directory), staged and unstaged, untracked and ignored files.
import { execFileSync } from "node:child_process";
import git from "isomorphic-git";
import * as fs from "node:fs";
import { chmodSync, existsSync, lstatSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initRepo } from "./repos.js";
import { seededRandom } from "../support/random.js";

const SEGMENTS = ["a", "b", "src", "lib", "build", "node_modules", "x y", "ünï", "tmp", "keep.log", "c.txt", "d.md", "e.log", "f.sh"];

/** Replaces `path` by a FIFO (a special file) when `mkfifo` is there. */
function fifo(path: string): boolean {
  try {
    fs.rmSync(path, { force: true });
    mkdirSync(join(path, ".."), { recursive: true });
    execFileSync("mkfifo", [path], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export async function randomRepository(dir: string, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const chance = (p: number): boolean => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const repo = await initRepo(dir);
  if (seed % 4 === 3) await git.setConfig({ fs, dir, path: "core.filemode", value: false });
  const abs = (path: string): string => join(dir, path);
  const content = (): string => "x".repeat(Math.floor(random() * 40)) + `${random()}\n`;
  const kind = (path: string): "file" | "dir" | "link" | undefined => {
    const stat = lstatSync(abs(path), { throwIfNoEntry: false });
    return !stat ? undefined : stat.isDirectory() ? "dir" : stat.isSymbolicLink() ? "link" : "file";
  };
  /** A path whose parents are directories (or absent) and which is not itself a directory. */
  const freePath = (): string | undefined => {
    const depth = 1 + Math.floor(random() * 3);
    const parts = Array.from({ length: depth }, () => pick(SEGMENTS));
    for (let i = 1; i < parts.length; i++) {
      const k = kind(parts.slice(0, i).join("/"));
      if (k !== undefined && k !== "dir") return undefined;
    }
    const path = parts.join("/");
    return kind(path) === "dir" ? undefined : path;
  };
  const create = (path: string): void => {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    if (chance(0.1)) symlinkSync(pick(["c.txt", "../a", "missing"]), abs(path));
    else {
      writeFileSync(abs(path), content());
      if (chance(0.2)) chmodSync(abs(path), 0o755);
    }
  };
  const old = Date.now() / 1000 - 7200;
  const age = (path: string): void => {
    if (kind(path) === "file") utimesSync(abs(path), old, old);
  };

  writeFileSync(abs(".gitignore"), "*.log\n!keep.log\nbuild/\nnode_modules\n");
  mkdirSync(abs("src"), { recursive: true });
  writeFileSync(abs("src/.gitignore"), "*.md\ntmp/\n");
  writeFileSync(abs(".git/info/exclude"), "x y\n");
  writeFileSync(abs(".gitattributes"), "*.md diff\n");
  const tracked: string[] = [];
  for (let i = 0; i < 50; i++) {
    const path = freePath();
    if (path === undefined || kind(path) !== undefined) continue;
    create(path);
    tracked.push(path);
  }
  // Half the repositories have stat data older than the index (trusted), half racy entries.
  if (seed % 2 === 0) for (const path of tracked) age(path);
  for (const path of [".gitignore", "src/.gitignore", ".gitattributes", ...tracked]) await git.add({ fs, dir, filepath: path, force: true });
  await repo.commit("random");

  for (const path of tracked) {
    if (kind(path) === undefined) continue;
    const roll = random();
    if (roll < 0.12 && kind(path) === "file") writeFileSync(abs(path), content() + "longer\n");
    else if (roll < 0.2 && kind(path) === "file") {
      const before = fs.readFileSync(abs(path));
      writeFileSync(abs(path), Buffer.from(before.toString("latin1").split("").reverse().join(""), "latin1"));
      if (chance(0.5)) utimesSync(abs(path), old, old);
    } else if (roll < 0.27 && kind(path) === "file") chmodSync(abs(path), lstatSync(abs(path)).mode & 0o111 ? 0o644 : 0o755);
    else if (roll < 0.33) fs.rmSync(abs(path));
    else if (roll < 0.38) {
      fs.rmSync(abs(path));
      symlinkSync("c.txt", abs(path));
    } else if (roll < 0.42) {
      fs.rmSync(abs(path));
      create(`${path}/inner`);
    } else if (roll < 0.46) {
      fs.rmSync(abs(path));
      await git.remove({ fs, dir, filepath: path });
      continue;
    } else if (roll < 0.5) {
      await git.remove({ fs, dir, filepath: path }); // untracked again, still on disk
      continue;
    } else if (roll < 0.53) {
      // HEAD has a file where the index now has a directory.
      fs.rmSync(abs(path));
      await git.remove({ fs, dir, filepath: path });
      create(`${path}/sub`);
      if (kind(`${path}/sub`) === "file") await git.add({ fs, dir, filepath: `${path}/sub`, force: true });
      continue;
    } else if (roll < 0.55 && fifo(abs(path))) continue;
    const now = kind(path);
    if (chance(0.3) && (now === "file" || now === "link")) await git.add({ fs, dir, filepath: path, force: true });
    if (chance(0.15) && now === "file") writeFileSync(abs(path), content());
  }
  for (let i = 0; i < 25; i++) {
    const path = freePath();
    if (path === undefined || existsSync(abs(path)) || kind(path) === "link") continue;
    if (chance(0.05) && fifo(abs(path))) continue;
    create(path);
    if (chance(0.2) && kind(path) === "file") await git.add({ fs, dir, filepath: path, force: true });
  }
}
