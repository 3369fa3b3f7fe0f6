// Runs Workers in workerd through miniflare (the registry's workerd binary; no network):
// bundles an entry with the project's Worker bundler and starts a Miniflare on it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Miniflare, type MiniflareOptions } from "miniflare";
import type { ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
// @ts-expect-error -- a plain .mjs build tool without types
import { bundleWorker, COMPATIBILITY_DATE, COMPATIBILITY_FLAGS, WASM_MODULE_RULES } from "../../tools/worker/bundle.mjs";

/** Bundles `entry` (relative to the repository root) into a temp directory; returns the file. */
export async function bundle(entry: string): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), "zh-worker-bundle-")), "worker.mjs");
  await bundleWorker({ entry, outfile });
  return outfile;
}

/** A Miniflare over one bundled ES module with the project's compatibility settings. */
export function miniflare(scriptPath: string, options: Partial<MiniflareOptions> & Record<string, unknown>): Miniflare {
  return new Miniflare({
    modules: true,
    scriptPath,
    // Module names are paths below this root (the default, the cwd, cannot reach a temp dir).
    modulesRoot: dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    // A bundle that imports CodeMode carries QuickJS's WebAssembly beside it, loaded as a compiled module.
    modulesRules: WASM_MODULE_RULES,
    ...options,
  } as MiniflareOptions);
}

const bundles = new Map<string, Promise<string>>();

/**
 * `bundle(entry)` once per test process: the suites that start the same Worker (the host fixture's
 * files, tests/support/hosts.ts) share one bundle instead of each spending seconds on esbuild.
 * Files run in shared worker processes (vitest `isolate: false`), so the cache spans files.
 */
export function bundleOnce(entry: string): Promise<string> {
  let pending = bundles.get(entry);
  if (!pending) {
    pending = bundle(entry);
    // A failed bundle is not cached: the next file tries again and reports its own error.
    pending.catch(() => bundles.delete(entry));
    bundles.set(entry, pending);
  }
  return pending;
}

/** A fixture host Durable Object running in workerd beside the scripted model. */
export interface EmbedFixture {
  readonly model: TestModel;
  readonly mf: Miniflare;
  /** The Worker's origin. */
  readonly url: string;
  readonly api: ZeClient;
  close(): Promise<void>;
}

/**
 * Starts the scripted model, bundles the fixture `entry` (an embedding Durable Object class
 * `className` bound as `binding`) and serves it on loopback, with the scripted model as provider
 * `test` (`test/scripted`, no authentication) in the variable `providersBinding` the fixture reads.
 */
export async function startEmbedFixture(entry: string, options: { readonly className: string; readonly binding: string; readonly providersBinding: string }): Promise<EmbedFixture> {
  const model = await startTestModel();
  try {
    const script = await bundle(entry);
    const mf = miniflare(script, {
      durableObjects: { [options.binding]: { className: options.className, useSQLite: true } },
      bindings: { [options.providersBinding]: JSON.stringify(testProviderConfig(model)) },
      host: "127.0.0.1",
      port: 0,
    });
    const url = (await mf.ready).origin;
    return {
      model,
      mf,
      url,
      api: networkClient(url),
      close: async () => {
        await mf.dispose();
        await model.close();
      },
    };
  } catch (error) {
    await model.close();
    throw error;
  }
}
