// npm run build, after tsc: the `ze-harness/worker-host` entry (worker/host-public.ts) bundled for
// workerd into dist/worker-host/index.mjs with tools/worker/bundle.mjs (one ES module; `node:*`
// imports stay imports for `nodejs_compat`; QuickJS's .wasm copied beside it, imported by name).
// Its typings come from the public declaration pass, `tsc -p sdk/tsconfig.json` (dist/types/worker/host-public.d.ts).
// Refuses a bundle that would import a native package or a `cloudflare:*` module other than
// `cloudflare:workers` (Session plugins' RPC classes, worker/plugins-loader.ts): every Worker runtime
// and an embedder's bundler (wrangler, esbuild with `cloudflare:*` external) provide that one.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bundleWorker, root } from "./bundle.mjs";

const outdir = join(root, "dist", "worker-host");
rmSync(outdir, { recursive: true, force: true });
const outfile = join(outdir, "index.mjs");
// @libsql/client is imported lazily for libsql:// URLs only (services/storage/remote.ts), never in a
// Durable Object: its import becomes a module that throws, so an embedder's bundler never looks for it.
const { natives } = await bundleWorker({ entry: "worker/host-public.ts", outfile, unreachable: /^@libsql\/client$/ });
if (natives.size > 0) throw new Error(`the worker-host bundle imports native packages: ${[...natives.keys()].join(", ")}`);
const source = readFileSync(outfile, "utf8");
const cloudflare = [...source.matchAll(/from\s*["'](cloudflare:[^"']+)["']/g)].map((match) => match[1]).filter((name) => name !== "cloudflare:workers");
if (cloudflare.length > 0) throw new Error(`the worker-host bundle imports ${[...new Set(cloudflare)].join(", ")}`);
