// Validation against generated/config.schema.json (draft 2020-12), compiled once on first
// use. Ajv reports every failure it finds; one file fails with ONE error, the most specific
// one (see `pickError`), located by a JSON pointer into the file.
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { createRequire } from "node:module";
import schema from "../../generated/config.schema.json" with { type: "json" };
import { MAX_CONFIG_DEPTH, tooDeep } from "./depth.js";
import { configInvalid, type ConfigInvalid, type ConfigResult } from "./errors.js";
import type { Config } from "./types.js";

/** The `$id` of the root entry in the bundle's `$defs`. */
const ROOT_ID = "Config.json";

let compiled: { readonly ajv: Ajv2020; readonly validate: ValidateFunction } | undefined;

// Made on first use: a host without `import.meta.url` (the Worker bundle) imports this module
// for its types and helpers and never validates a file.
let required: NodeRequire | undefined;
const require = (id: string): unknown => (required ??= createRequire(import.meta.url))(id);

function validator(): { readonly ajv: Ajv2020; readonly validate: ValidateFunction } {
  if (compiled) return compiled;
  // Loaded on first use: start-up normally needs only the precompiled validator below.
  const { Ajv2020: Ajv } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  const formats = require("ajv-formats") as typeof import("ajv-formats");
  const ajv = new Ajv({
    // Every strict check throws (instead of logging), so a schema Ajv would misread fails loudly.
    strict: true,
    allErrors: true,
    // The schema's tagged unions carry `discriminator: { propertyName: "kind" }`, so Ajv checks
    // only the branch the tag selects.
    discriminator: true,
    // `parentSchema` on errors, to name a discriminator's allowed tags.
    verbose: true,
  });
  formats.default(ajv);
  ajv.addSchema(schema);
  const validate = ajv.getSchema(ROOT_ID);
  if (!validate) throw new Error(`generated/config.schema.json has no ${ROOT_ID} entry`);
  compiled = { ajv, validate };
  return compiled;
}

/**
 * The same validator, compiled at build time (`tools/build-assets.mjs` writes it beside this
 * module in dist/ with Ajv's standalone code): compiling the schema costs ~150 ms of start-up.
 * Absent when running from sources; then the schema is compiled here.
 */
let precompiled: ValidateFunction | null | undefined;

function fastValidator(): ValidateFunction | undefined {
  if (precompiled === undefined) {
    try {
      const loaded = require("./config.validator.cjs") as ValidateFunction | { default: ValidateFunction };
      precompiled = typeof loaded === "function" ? loaded : loaded.default;
    } catch {
      precompiled = null;
    }
  }
  return precompiled ?? undefined;
}

/** Validates one parsed file. On success the value is returned unchanged (no defaults are filled in). */
export function validateConfig(value: unknown, file: string): ConfigResult<Config> {
  // Measured first: the validators, the merge and option copies recurse once per level.
  const deep = tooDeep(value);
  if (deep !== undefined) return { ok: false, error: configInvalid(file, deep, `nested deeper than ${MAX_CONFIG_DEPTH} levels (objects and arrays)`) };
  const fast = fastValidator();
  // A file the fast validator rejects is re-checked with the full Ajv instance, which also
  // resolves the references `pickError` needs to word the error.
  if (!fast?.(value)) {
    const { ajv, validate } = validator();
    if (!validate(value)) return { ok: false, error: pickError(ajv, validate.errors ?? [], file) };
  }
  const config = value as Config;
  const duplicate = duplicateMcpServer(config, file);
  if (duplicate) return { ok: false, error: duplicate };
  return { ok: true, value: config };
}

/** MCP server ids and names must be unique within the list (a check JSON Schema cannot state). */
function duplicateMcpServer(config: Config, file: string): ConfigInvalid | undefined {
  const ids = new Map<string, number>();
  const names = new Map<string, number>();
  for (const [index, server] of (config.mcp ?? []).entries()) {
    const sameId = ids.get(server.id);
    if (sameId !== undefined) {
      return configInvalid(file, `/mcp/${index}/id`, `duplicate MCP server id ${JSON.stringify(server.id)} (also /mcp/${sameId}/id)`);
    }
    const sameName = names.get(server.name);
    if (sameName !== undefined) {
      return configInvalid(file, `/mcp/${index}/name`, `duplicate MCP server name ${JSON.stringify(server.name)} (also /mcp/${sameName}/name)`);
    }
    ids.set(server.id, index);
    names.set(server.name, index);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Choosing and phrasing one error

interface Located {
  readonly path: string;
  readonly message: string;
  readonly keyword: string;
  readonly order: number;
}

const escapePointer = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");
const unescapePointer = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~");
const depth = (pointer: string): number => (pointer === "" ? 0 : pointer.split("/").length - 1);
const quote = (value: unknown): string => JSON.stringify(value);
const lastSegment = (pointer: string): string => unescapePointer(pointer.slice(pointer.lastIndexOf("/") + 1));

/** The `kind` values a discriminated union's branches accept, read from the referenced schemas. */
function discriminatorTags(ajv: Ajv2020, error: ErrorObject): string[] {
  const union = error.parentSchema as { oneOf?: { $ref?: string }[] } | undefined;
  const property = (error.params as { tag?: string }).tag ?? "kind";
  const tags: string[] = [];
  for (const branch of union?.oneOf ?? []) {
    const target = branch.$ref === undefined ? undefined : ajv.getSchema(branch.$ref)?.schema;
    const tag = (target as { properties?: Record<string, { const?: unknown }> } | undefined)?.properties?.[property]?.const;
    if (typeof tag === "string") tags.push(tag);
  }
  return tags;
}

/** Where an error points and what it says, or `undefined` for errors that only summarize others. */
function locate(ajv: Ajv2020, error: ErrorObject, order: number): Located | undefined {
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  const located = (path: string, message: string): Located => ({ path, message, keyword: error.keyword, order });
  switch (error.keyword) {
    case "anyOf":
    case "oneOf":
      return undefined; // summaries of branch errors, used only as a last resort
    case "required":
      return located(`${at}/${escapePointer(String(params["missingProperty"]))}`, `missing required property ${quote(params["missingProperty"])}`);
    case "additionalProperties":
      return located(`${at}/${escapePointer(String(params["additionalProperty"]))}`, `unknown property ${quote(params["additionalProperty"])}`);
    case "unevaluatedProperties":
      return located(`${at}/${escapePointer(String(params["unevaluatedProperty"]))}`, `unknown property ${quote(params["unevaluatedProperty"])}`);
    case "not":
      // `unevaluatedProperties: { not: {} }` reports the unknown key itself as failing `not`.
      if (error.schemaPath.endsWith("/unevaluatedProperties/not")) {
        return located(at, `unknown property ${quote(lastSegment(at))}`);
      }
      return located(at, error.message ?? "is not allowed");
    case "propertyNames": {
      const pattern = (error.parentSchema as { propertyNames?: { pattern?: string } } | undefined)?.propertyNames?.pattern;
      const name = String(params["propertyName"]);
      return located(`${at}/${escapePointer(name)}`, `invalid key ${quote(name)}${pattern ? `: must match pattern ${quote(pattern)}` : ""}`);
    }
    case "discriminator": {
      const tag = String(params["tag"] ?? "kind");
      const path = `${at}/${escapePointer(tag)}`;
      const tags = discriminatorTags(ajv, error);
      const expected = tags.length > 0 ? `must be one of ${tags.map(quote).join(", ")}` : "is not a known kind";
      if (params["error"] === "mapping") return located(path, `unknown ${tag} ${quote(params["tagValue"])}: ${expected}`);
      return located(path, params["tagValue"] === undefined ? `missing required property ${quote(tag)}` : `must be a string: ${expected}`);
    }
    case "const":
      return located(at, `must be ${quote(params["allowedValue"])}`);
    case "enum":
      return located(at, `must be one of ${(params["allowedValues"] as unknown[]).map(quote).join(", ")}`);
    case "type":
      return located(at, `must be ${String(params["type"])}`);
    default:
      if (error.schemaPath.includes("/propertyNames/")) return undefined; // phrased by the `propertyNames` error
      return located(at, error.message ?? `fails ${error.keyword}`);
  }
}

/**
 * A wrong `kind` makes every other complaint about the same object noise (they describe a
 * different shape): the `kind` mismatch stands for the whole object.
 */
function withoutKindNoise(located: readonly Located[]): Located[] {
  const wrongKind = located.filter((entry) => entry.keyword === "const" && entry.path.endsWith("/kind")).map((entry) => entry.path.slice(0, -"kind".length));
  return located.filter((entry) => !wrongKind.some((object) => entry.path.startsWith(object) && entry.path !== `${object}kind`));
}

/**
 * The deepest error wins (it names the most specific location); on a tie a constraint beats a
 * bare type mismatch, which usually comes from the other branch of a `string | object` union.
 * Type and const mismatches from several union branches at one place merge into one message.
 */
function pickError(ajv: Ajv2020, errors: readonly ErrorObject[], file: string): ConfigInvalid {
  const located = withoutKindNoise(errors.flatMap((error, order) => locate(ajv, error, order) ?? []));
  if (located.length === 0) {
    const first = errors[0];
    return configInvalid(file, first?.instancePath ?? "", first?.message ?? "does not match the configuration schema");
  }
  const weak = (entry: Located) => entry.keyword === "type" || entry.keyword === "const";
  const best = [...located].sort(
    (a, b) => depth(b.path) - depth(a.path) || Number(weak(a)) - Number(weak(b)) || a.order - b.order,
  )[0]!;
  if (!weak(best)) return configInvalid(file, best.path, best.message);
  const alternatives = located.filter((entry) => entry.path === best.path && weak(entry)).map((entry) => entry.message.replace(/^must be /, ""));
  const unique = [...new Set(alternatives)];
  return configInvalid(file, best.path, `must be ${unique.join(" or ")}`);
}
