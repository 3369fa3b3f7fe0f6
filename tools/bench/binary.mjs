// The single executable against the npm form (`node bin/ze-harness.js`): sizes (release archive,
// executable, the payload it extracts, the npm tarball), the first run's extraction to the cache
// (a fresh XDG_CACHE_HOME each run) and unpacking the archive with tar, then start-up, interleaved
// with the npm form as the same-run baseline: `--version` and a one-shot
// `run --embedded "hello"` against the scripted test model, with a warm cache.
// Builds the binary first when dist/release/ has none (npm run build:binary's second step).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath, formatTable, median, ms, percentile, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";
import { startModelProcess } from "./oneshot.mjs";

export const name = "binary";
export const description = "the single executable: sizes, first-run extraction, --version and one-shot start-up against the npm form";

const release = join(repoRoot, "dist", "release");
const size = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function du(directory) {
  let total = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    total += entry.isDirectory() ? du(path) : entry.isFile() ? statSync(path).size : 0;
  }
  return total;
}

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void }} context */
export async function run({ runs, budgetMs, log }) {
  const executable = join(release, "ze-harness");
  const archiveName = () => (existsSync(release) ? readdirSync(release).find((name) => name.endsWith(".tar.gz")) : undefined);
  if (!existsSync(executable) || archiveName() === undefined) {
    log("building the binary (tools/binary/build.mjs)…");
    execFileSync(process.execPath, [join(repoRoot, "tools", "binary", "build.mjs")], { cwd: repoRoot, stdio: ["ignore", "ignore", "inherit"] });
  }
  const archive = join(release, archiveName());
  const home = tempHome("ze-bench-binary-");
  const scratch = mkdtempSync(join(tmpdir(), "ze-bench-binary-"));
  const model = await startModelProcess(home.dir, 2 * (runs + 2));
  try {
    writeTestModelConfig(home, `${model.url}/v1`);
    const options = { env: home.env, cwd: home.root };

    // Sizes.
    const pack = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }))[0];
    const sizeRuns = Math.min(runs, 5);
    const firstRuns = [];
    const untar = [];
    let payloadBytes = 0;
    for (let index = 0; index < sizeRuns; index++) {
      const cache = join(scratch, `cache-${index}`);
      const result = await timeRun(executable, ["--version"], { ...options, env: { ...home.env, XDG_CACHE_HOME: cache } });
      if (result.code !== 0) throw new Error(`the executable's first run exited ${result.code}: ${result.stderr.trim()}`);
      firstRuns.push(result.ms);
      if (index === 0) payloadBytes = du(join(cache, "ze-harness"));
      rmSync(cache, { recursive: true, force: true });
      const target = join(scratch, `untar-${index}`);
      execFileSync("mkdir", [target]);
      const started = performance.now();
      execFileSync("tar", ["-xzf", archive, "-C", target]);
      untar.push(performance.now() - started);
      rmSync(target, { recursive: true, force: true });
    }
    log(
      formatTable(
        ["artifact", "size"],
        [
          [`release archive (${archiveName()})`, size(statSync(archive).size)],
          ["executable (Node runtime + payload)", size(statSync(executable).size)],
          ["payload extracted to the cache", size(payloadBytes)],
          ["npm tarball (npm pack)", `${size(pack.size)} (${size(pack.unpackedSize)} unpacked, ${pack.entryCount} files; dependencies installed apart)`],
        ],
      ),
    );

    // Start-up with a warm cache (one untimed run extracts), interleaved with the npm form.
    const cases = [
      { label: "npm form: node bin/ze-harness.js --version (baseline)", command: process.execPath, args: [binPath, "--version"] },
      { label: "executable --version", command: executable, args: ["--version"] },
      { label: 'npm form: run --embedded "hello" (baseline)', command: process.execPath, args: [binPath, "run", "--embedded", "hello"] },
      { label: 'executable run --embedded "hello"', command: executable, args: ["run", "--embedded", "hello"] },
    ];
    for (const entry of cases) {
      const result = await timeRun(entry.command, entry.args, options);
      if (result.code !== 0) throw new Error(`${entry.label} exited ${result.code}: ${result.stderr.trim()}`);
    }
    const samples = cases.map(() => []);
    const started = Date.now();
    let completed = 0;
    for (let round = 0; round < runs; round++) {
      for (const [index, entry] of cases.entries()) samples[index].push((await timeRun(entry.command, entry.args, options)).ms);
      completed += 1;
      if (Date.now() - started > budgetMs) break;
    }
    const ratio = (index, baseline) => `${(median(samples[index]) / median(samples[baseline])).toFixed(2)}x`;
    log(`${completed} interleaved runs per start-up case; ${sizeRuns} first runs (fresh cache) and archive unpackings; p99 is nearest-rank.`);
    log(
      formatTable(
        ["case", "median", "p99", "vs npm form"],
        [
          ["first run: extract to the cache + --version", ms(median(firstRuns)), ms(percentile(firstRuns, 99)), ""],
          ["tar -xzf the release archive", ms(median(untar)), ms(percentile(untar, 99)), ""],
          ...cases.map((entry, index) => [entry.label, ms(median(samples[index])), ms(percentile(samples[index], 99)), index % 2 === 0 ? "1.00x" : ratio(index, index - 1)]),
        ],
      ),
    );
  } finally {
    await model.stop();
    home.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}
