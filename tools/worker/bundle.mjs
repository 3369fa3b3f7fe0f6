// Bundles a Worker entry for workerd: one ESM file, platform neutral with the `workerd` /
// `worker` / `browser` export conditions. `node:*` built-ins stay imports (workerd serves them
// under the `nodejs_compat` flag), as do `cloudflare:*` modules; a bare Node built-in name is rewritten to its `node:` form.
// Native addons cannot be bundled: they are reported, never silently left external.
// WebAssembly: workerd compiles no module from bytes at run time, it takes `.wasm` files only as
// module imports. A `.wasm` import (worker/codemode.ts imports QuickJS's) is copied next to the
// bundle under a content-hashed name and stays an import of that file; the runtime loads it as a
// compiled module (miniflare: `modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }]`).
import { build } from "esbuild";
import { existsSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** How workerd loads the `.wasm` files the bundle imports (give it to every Miniflare of a bundle). */
export const WASM_MODULE_RULES = [{ type: "CompiledWasm", include: ["**/*.wasm"] }];
/** The compatibility settings every Worker of this project runs with (worker/miniflare.config.mjs too). */
export const COMPATIBILITY_DATE = "2025-12-01";
export const COMPATIBILITY_FLAGS = ["nodejs_compat"];

const NATIVE = /^(libsql|@libsql\/|@neon-rs\/|node-pty|bufferutil|utf-8-validate)/;
/**
 * Node-only modules the Anthropic SDK reaches only through lazy imports this host never takes:
 * its `node.mjs` helpers (child_process, fs, readline, worker_threads) behind the local agent
 * toolset and the credential-file chain (Ze always passes the key). Each dynamic import of one
 * becomes a module that throws if it is ever loaded.
 */
const NODE_ONLY_LAZY = /(^|\/)node\.mjs$/;
const builtins = new Set(builtinModules);

/**
 * Bundles `entry` to `outfile`; resolves with esbuild's metafile and the native packages the
 * graph asked for (left as imports that fail in workerd: each is a seam still to cut).
 * `unreachable`: a RegExp of packages whose dynamic imports become modules that throw if loaded.
 */
export async function bundleWorker({ entry, outfile, write = true, unreachable }) {
  const natives = new Map();
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    write,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    metafile: true,
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
    loader: { ".wasm": "copy" },
    plugins: [
      {
        name: "node-builtins-and-natives",
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === "dynamic-import" && NODE_ONLY_LAZY.test(args.path) && args.importer.includes("@anthropic-ai/sdk/")) return { path: args.path, namespace: "node-only" };
            // `unreachable` (a RegExp): packages only ever imported lazily on paths a Worker never takes,
            // replaced by a module that throws if loaded (a published bundle must not name them).
            if (args.kind === "dynamic-import" && unreachable?.test(args.path)) return { path: args.path, namespace: "node-only" };
            if (args.path.startsWith("node:")) return { path: args.path, external: true };
            // workerd's own modules (`cloudflare:workers`: DurableObject, the base class RPC needs).
            if (args.path.startsWith("cloudflare:")) return { path: args.path, external: true };
            const bare = args.path.split("/")[0];
            if (builtins.has(args.path) || (builtins.has(bare) && !args.path.startsWith("."))) return { path: `node:${args.path}`, external: true };
            if (NATIVE.test(args.path)) {
              const list = natives.get(args.path) ?? [];
              list.push(args.importer.replace(`${root}/`, ""));
              natives.set(args.path, list);
              return { path: args.path, external: true };
            }
            return undefined;
          });
          // The dashboard page (dist/dashboard.json, written by npm run build's tools/build-assets.mjs),
          // inlined: a Worker reads no files. Absent (never built): null, and the host serves the
          // page saying how to build it, as the Node host does.
          b.onResolve({ filter: /^ze-harness:dashboard-asset$/ }, () => ({ path: join(root, "dist", "dashboard.json"), namespace: "dashboard-asset" }));
          b.onLoad({ filter: /.*/, namespace: "dashboard-asset" }, (args) => ({
            contents: `export default ${existsSync(args.path) ? readFileSync(args.path, "utf8") : "null"};`,
            loader: "js",
          }));
          b.onLoad({ filter: /.*/, namespace: "node-only" }, (args) => ({
            contents: `throw new Error(${JSON.stringify(`${args.path} is Node-only and not part of the Worker bundle`)});`,
            loader: "js",
          }));
        },
      },
    ],
  });
  return { metafile: result.metafile, natives };
}
