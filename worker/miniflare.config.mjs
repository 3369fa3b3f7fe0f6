// The Worker's deployment configuration for local runs (what a wrangler.toml would say, in
// miniflare's terms): the bundled entry, the compatibility settings, the Durable Object
// bindings (SQLite-backed) and the Worker variables. `npm run worker:dev` and the tests use it.
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS, WASM_MODULE_RULES } from "../tools/worker/bundle.mjs";
import { dirname } from "node:path";

/** Worker variables taken from the environment when set (secrets included: they are bindings too). */
export const WORKER_VARIABLES = [
  "HARNESS_API_TOKEN",
  "HARNESS_ALLOWED_HOSTS",
  "HARNESS_ALLOWED_ORIGINS",
  "HARNESS_PERMISSIONS",
  "HARNESS_PERMISSION_CASE_SENSITIVE",
  "HARNESS_APPROVAL_TIMEOUT_MS",
  "HARNESS_PROVIDERS",
  "HARNESS_CODEMODE_ENABLED",
  "HARNESS_MCP",
  "HARNESS_MCP_CALLBACK_BASE_URL",
  "HARNESS_MODEL",
  "HARNESS_RECOVERY_INTERVAL_MS",
  // A test and development knob (worker/plugins-sources.ts): loopback http:// Bundle plugin URLs.
  "HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP",
];

/**
 * Provider keys as Worker secrets: variables named like the catalog's credential variables
 * (`OPENAI_API_KEY`, `OPENROUTER_API_KEY`, …) are passed through too, so a provider's
 * `definition.credentials.environment` names find them.
 */
export const SECRET_PATTERN = /^[A-Z][A-Z0-9_]*_API_KEY$/;

/**
 * The provider-key secrets to bind: every variable a `HARNESS_PROVIDERS` definition names in
 * `credentials.environment`, plus the names listed in `HARNESS_SECRETS` (comma-separated: keys
 * of catalog providers, such as OPENAI_API_KEY). Only names set in the environment are bound.
 */
export function secretNames(env) {
  const names = new Set((env.HARNESS_SECRETS ?? "").split(",").map((name) => name.trim()).filter((name) => name !== ""));
  try {
    for (const entry of Object.values(JSON.parse(env.HARNESS_PROVIDERS ?? "{}") ?? {})) {
      for (const name of entry?.definition?.credentials?.environment ?? []) if (typeof name === "string") names.add(name);
    }
  } catch {
    // An invalid map is the server object's to refuse (with its typed error), not the launcher's.
  }
  return [...names];
}

/**
 * Miniflare options for the bundled Worker at `scriptPath`. `persist` is the directory the
 * Durable Objects' SQLite files live under (omitted: in memory); `host`/`port` the listener.
 */
export function workerOptions({ scriptPath, persist, host = "127.0.0.1", port, env = process.env }) {
  const bindings = {};
  for (const name of [...WORKER_VARIABLES, ...secretNames(env)]) if (env[name] !== undefined) bindings[name] = env[name];
  for (const [name, value] of Object.entries(env)) if (SECRET_PATTERN.test(name) && value !== undefined) bindings[name] = value;
  return {
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    // CodeMode's QuickJS WebAssembly, copied next to the bundle, loads as a compiled module.
    modulesRules: WASM_MODULE_RULES,
    durableObjects: {
      HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true },
      // The singleton provider authority (addressed by name; its connections in its own SQLite).
      HARNESS_PROVIDER_AUTHORITY: { className: "HarnessProviderAuthorityObject", useSQLite: true },
    },
    // Runtime plugins: each `Bundle` Session plugin runs in its own Dynamic Worker (worker/plugins-loader.ts).
    workerLoaders: { LOADER: {} },
    ...(persist !== undefined ? { durableObjectsPersist: persist } : {}),
    bindings,
    host,
    ...(port !== undefined ? { port } : {}),
  };
}
