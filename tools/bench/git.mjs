// `gitStatus` on a 10,000-file repository (made with isomorphic-git in a temp dir): clean, and
// with 10 modified, 5 staged and 5 untracked files; baseline `git status --porcelain -uall`
// of the git binary on the same repository when there is one. (The Turn recorder's workdir scan
// is measured by recording.mjs.) Runs the BUILT services (dist/).
import git from "isomorphic-git";
import * as fs from "node:fs";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { formatTable, percentile, repoRoot, tempHome } from "./lib.mjs";

export const name = "git";
export const description = "gitStatus on a 10,000-file repository (ms), against git status";

const FILES = 10_000;

async function timed(fn, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times;
}

const row = (label, times) => [label, percentile(times, 50).toFixed(1), percentile(times, 99).toFixed(1), String(times.length)];

export async function run({ runs, log }) {
  const dist = (path) => import(pathToFileURL(join(repoRoot, "dist", path)).href);
  const { gitStatus } = await dist("services/workspace/git/status.js");
  const home = tempHome("ze-bench-git-");
  try {
    const dir = join(home.root, "repo");
    mkdirSync(dir, { recursive: true });
    await git.init({ fs, dir, defaultBranch: "main" });
    await git.setConfig({ fs, dir, path: "core.filemode", value: true });
    const setup = process.hrtime.bigint();
    for (let i = 0; i < FILES; i++) {
      const sub = join(dir, `d${Math.floor(i / 100)}`);
      if (i % 100 === 0) mkdirSync(sub);
      writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n`.repeat(20));
    }
    await git.add({ fs, dir, filepath: "." });
    await git.commit({ fs, dir, message: "10k", author: { name: "bench", email: "bench@example.com" } });
    log(`setup: ${FILES} files committed with isomorphic-git in ${(Number(process.hrtime.bigint() - setup) / 1e9).toFixed(1)} s`);

    const rows = [];
    const count = Math.max(3, Math.min(runs, 10));
    const clean = await timed(() => gitStatus(dir), count);
    rows.push(row("gitStatus, clean", clean));
    let baseline;
    const gitEnv = { PATH: process.env.PATH ?? "", HOME: home.dir, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
    try {
      execFileSync("git", ["status", "--porcelain"], { cwd: dir, env: gitEnv, stdio: "ignore" });
      baseline = await timed(() => execFileSync("git", ["status", "--porcelain", "-uall"], { cwd: dir, env: gitEnv, stdio: "ignore" }), count);
      rows.push(row("git status --porcelain -uall (binary, clean)", baseline));
    } catch {
      log("no git binary: no baseline");
    }
    for (let i = 0; i < 10; i++) writeFileSync(join(dir, `d${i}`, `f${i * 100}.txt`), "changed\n");
    for (let i = 10; i < 15; i++) {
      writeFileSync(join(dir, `d${i}`, `f${i * 100}.txt`), "staged\n");
      await git.add({ fs, dir, filepath: `d${i}/f${i * 100}.txt` });
    }
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `new${i}.txt`), "untracked\n");
    const dirty = await timed(() => gitStatus(dir), count);
    const status = await gitStatus(dir);
    rows.push(row(`gitStatus, ${status.worktree.length} worktree / ${status.staged.length} staged / ${status.untracked.length} untracked`, dirty));

    log(formatTable(["measure", "median ms", "p99 ms", "runs"], rows));
    if (baseline) log(`ratio gitStatus / git binary (clean, medians): ${(percentile(clean, 50) / percentile(baseline, 50)).toFixed(1)}×`);
  } finally {
    home.cleanup();
  }
}
