// Plugin files import the plugin contract by name — `ze-harness/plugin`, or the reference's
// `@zephyrcloudio/harness-plugin` — even where no copy of this package is installed beside them
// (a plugin file in a project's config directory). A module resolve hook, registered once before
// the first plugin import, maps both names to this build's own contract module.
import { existsSync } from "node:fs";
import { register } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const PLUGIN_CONTRACT_SPECIFIERS: readonly string[] = ["ze-harness/plugin", "@zephyrcloudio/harness-plugin"];

let registered = false;

/** The contract module of this build: dist/plugin/index.js (or the source next to it when run from source). */
export function pluginContractPath(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let directory = dirname(from); ; directory = dirname(directory)) {
    for (const candidate of [join(directory, "dist", "plugin", "index.js"), join(directory, "plugin", "index.js")]) {
      if (existsSync(candidate) && existsSync(join(directory, "package.json"))) return candidate;
    }
    if (dirname(directory) === directory) return undefined;
  }
}

/** Registers the resolve hook (once per process; a no-op where module hooks are unavailable). */
export function registerPluginContractAlias(): void {
  if (registered) return;
  registered = true;
  const target = pluginContractPath();
  if (target === undefined) return;
  const url = pathToFileURL(target).href;
  const hooks =
    `const names = new Set(${JSON.stringify(PLUGIN_CONTRACT_SPECIFIERS)});` +
    `export async function resolve(specifier, context, next) {` +
    `  if (names.has(specifier)) return { url: ${JSON.stringify(url)}, shortCircuit: true };` +
    `  return next(specifier, context);` +
    `}`;
  try {
    register(`data:text/javascript,${encodeURIComponent(hooks)}`);
  } catch {
    // Hooks cannot be registered here (an embedding runtime): plugins then need the package installed.
  }
}
