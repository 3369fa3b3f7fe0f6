// Build-time assets (not committed; written into dist/ after tsc and tools/bundle.mjs):
//  - dist/reference.html: the API reference page, Redoc with its scripts inlined (no CDN at run time);
//  - dist/cli/root-help.txt: oclif's own root help, so `ze-harness --help` answers without loading oclif;
//  - dist/dashboard.json: the dashboard page and its inline script's hash (tools/dashboard-asset.mjs).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import addFormats from "ajv-formats";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDashboard } from "./dashboard-asset.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
mkdirSync(join(root, "dist", "cli"), { recursive: true });

execFileSync(
  join(root, "node_modules", ".bin", "redocly"),
  ["build-docs", "generated/openapi.json", "--inlineBundle", "--title", "Ze Harness API", "-o", "dist/reference.html"],
  { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
);

// The config validator, precompiled (services/config/validate.ts loads it when present).
// Options must match validate.ts's Ajv instance.
const configSchema = JSON.parse(readFileSync(join(root, "generated", "config.schema.json"), "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true, verbose: true, code: { source: true, esm: false } });
addFormats.default(ajv);
ajv.addSchema(configSchema);
const validateConfig = ajv.getSchema("Config.json");
if (!validateConfig) throw new Error("generated/config.schema.json has no Config.json entry");
// Beside validate.ts's module in tsc's output and in the bundle (its chunks share dist/bundle/).
const validatorSource = standaloneCode.default(ajv, validateConfig);
for (const dir of [join(root, "dist", "services", "config"), join(root, "dist", "bundle")]) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.validator.cjs"), validatorSource);
}

const dashboard = await buildDashboard();
writeFileSync(join(root, "dist", "dashboard.json"), JSON.stringify({ html: dashboard.html, scriptHash: dashboard.scriptHash }));

// oclif finds the package from this file (bin/ has its own package.json marking it CommonJS).
const manifestPath = join(root, "package.json");
const help = execFileSync(
  process.execPath,
  ["--input-type=module", "-e", `import { execute } from "@oclif/core"; await execute({ args: ["--help"], dir: ${JSON.stringify(manifestPath)} });`],
  { cwd: root, encoding: "utf8", env: { ...process.env, COLUMNS: "100" } },
);
writeFileSync(join(root, "dist", "cli", "root-help.txt"), help);
console.log("assets: dist/reference.html, dist/cli/root-help.txt, dist/dashboard.json, config.validator.cjs in dist/services/config/ and dist/bundle/");
