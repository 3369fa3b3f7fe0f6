// Per-command cost of the OS sandbox (services/sandbox, BUILT in dist/): `/bin/sh -c true` spawned
// as the shell tool spawns it (its own process group, pipes), plain and under bubblewrap, the
// rounds alternating in one process so machine load hits both alike. Also the `network: [hosts]`
// launch, whose bridge (a `node -e` inside) starts before the command. Prints medians, p99 and
// the ratio to the plain spawn; asserts nothing.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { formatTable, median, percentile, repoRoot } from "./lib.mjs";

export const name = "sandbox";
export const description = "per-command overhead of the bubblewrap sandbox: `true` unsandboxed vs sandboxed (ms)";

function spawnMs(file, args, env, cwd) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`exit ${code}: ${stderr.trim()}`))));
  });
}

export async function run({ runs, log }) {
  const { HostSandbox } = await import(pathToFileURL(join(repoRoot, "dist", "services", "sandbox", "index.js")).href);
  const home = mkdtempSync(join(tmpdir(), "ze-bench-sandbox-"));
  const workdir = mkdtempSync(join(home, "work-"));
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
  const boxes = {
    none: new HostSandbox({ policy: { mode: "workspace-write", network: { kind: "none" } }, env, home, secrets: [] }),
    hosts: new HostSandbox({ policy: { mode: "workspace-write", network: { kind: "hosts", hosts: ["example.com"] } }, env, home, secrets: [] }),
  };
  try {
    for (const box of Object.values(boxes)) await box.prepare();
    const argv = ["/bin/sh", "-c", "true"];
    const launches = Object.fromEntries(Object.entries(boxes).map(([key, box]) => [key, box.wrap(argv, { cwd: workdir, env })]));
    const count = Math.max(50, runs * 5);
    const times = { plain: [], none: [], hosts: [] };
    // Warm-up: page cache, the bwrap binary, node for the bridge.
    await spawnMs(argv[0], argv.slice(1), env, workdir);
    for (const launch of Object.values(launches)) await spawnMs(launch.file, launch.args, launch.env, workdir);
    for (let i = 0; i < count; i++) {
      times.plain.push(await spawnMs(argv[0], argv.slice(1), env, workdir));
      times.none.push(await spawnMs(launches.none.file, launches.none.args, launches.none.env, workdir));
      // The bridged launch costs a node start: measured on every fifth round.
      if (i % 5 === 0) times.hosts.push(await spawnMs(launches.hosts.file, launches.hosts.args, launches.hosts.env, workdir));
    }
    const base = median(times.plain);
    const row = (label, values) => [label, median(values).toFixed(2), percentile(values, 99).toFixed(2), `${(median(values) / base).toFixed(1)}×`, String(values.length)];
    log(
      formatTable(
        ["`/bin/sh -c true`", "median ms", "p99 ms", "ratio", "runs"],
        [row("unsandboxed (baseline)", times.plain), row("sandboxed, no network", times.none), row("sandboxed, network: [hosts] (bridge)", times.hosts)],
      ),
    );
    log(`overhead per command: ${(median(times.none) - base).toFixed(2)} ms without network, ${(median(times.hosts) - base).toFixed(2)} ms with a host allowlist`);
  } finally {
    for (const box of Object.values(boxes)) await box.close();
    rmSync(home, { recursive: true, force: true });
  }
}
