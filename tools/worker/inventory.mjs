// npm run worker:inventory [-- --check] [-- --entry FILE ...]: what a Worker bundle imports that
// workerd may not run — `node:*` built-ins and native addons — and which source files import
// them, to steer the host capability seams. Bundles each entry like the Worker build
// (tools/worker/bundle.mjs) without writing it. Entries by default: worker/index.ts (the Worker
// as it is) and services/host/harness.ts (the Node composition root: the whole Core as composed
// today). Prints one Markdown table per entry. `--check` loads each built-in found in workerd
// (miniflare, nodejs_compat) and reports whether it exists there; without it, the "workerd"
// column repeats the measured list below.
import { parseArgs } from "node:util";
import { bundleWorker, COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "./bundle.mjs";

/** Measured with workerd 1.20251217.0, compatibility date 2025-12-01, nodejs_compat (--check). */
const MISSING_IN_WORKERD = new Set(["node:child_process", "node:worker_threads", "node:tty", "node:readline", "node:perf_hooks", "node:inspector", "node:cluster", "node:repl", "node:sqlite"]);
/** Modules workerd loads but whose behaviour is not Node's: the reason a call would still fail. */
const CAVEATS = {
  "node:fs": "in-memory virtual file system (no host disk)",
  "node:fs/promises": "in-memory virtual file system (no host disk)",
  "node:http": "client over fetch; no listening server",
  "node:https": "client over fetch",
  "node:net": "outbound sockets only",
  "node:os": "stub values",
  "node:module": "no createRequire of native addons",
  "node:process": "no pid, no signals, no spawning",
  "node:vm": "no real isolation",
  "node:dns": "over DNS-over-HTTPS",
};

const { values } = parseArgs({ options: { check: { type: "boolean", default: false }, entry: { type: "string", multiple: true } } });
const entries = values.entry ?? ["worker/index.ts", "services/host/harness.ts"];

async function checkInWorkerd(modules) {
  const { Miniflare } = await import("miniflare");
  const result = new Map();
  for (const name of modules) {
    const mf = new Miniflare({
      modules: true,
      script: `import * as M from "${name}"; export default { fetch() { return new Response(String(Object.keys(M).length)); } };`,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: COMPATIBILITY_FLAGS,
    });
    try {
      await (await mf.dispatchFetch("http://check/")).text();
      result.set(name, true);
    } catch {
      result.set(name, false);
    }
    await mf.dispose().catch(() => undefined);
  }
  return result;
}

for (const entry of entries) {
  const { metafile, natives } = await bundleWorker({ entry, outfile: "inventory.mjs", write: false });
  const importers = new Map();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    for (const imported of input.imports) {
      if (!imported.external || !imported.path.startsWith("node:")) continue;
      const list = importers.get(imported.path) ?? new Set();
      list.add(file);
      importers.set(imported.path, list);
    }
  }
  const names = [...importers.keys()].sort();
  const measured = values.check ? await checkInWorkerd(names) : undefined;
  const bytes = Object.values(metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  console.log(`\n### ${entry} (${Object.keys(metafile.inputs).length} modules, ${(bytes / 1024).toFixed(0)} KiB bundled)\n`);
  console.log("| import | workerd | imported by |");
  console.log("| --- | --- | --- |");
  for (const name of names) {
    const loads = measured ? measured.get(name) : !MISSING_IN_WORKERD.has(name);
    const status = loads ? (CAVEATS[name] ? `loads: ${CAVEATS[name]}` : "loads") : "**missing**";
    const files = [...importers.get(name)].sort();
    const shown = files.length > 6 ? `${files.slice(0, 6).join(", ")} and ${files.length - 6} more` : files.join(", ");
    console.log(`| \`${name}\` | ${status} | ${shown} |`);
  }
  for (const [name, files] of [...natives].sort()) console.log(`| \`${name}\` (native) | **cannot load** | ${[...new Set(files)].sort().join(", ")} |`);
}
