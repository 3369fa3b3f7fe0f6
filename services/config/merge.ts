// Layered merge. Later layers override earlier ones key by key: objects merge deeply, arrays
// and scalars replace (`mcp`, `skills`, `protocolVersions`, a provider entry `true` over an
// object, …). Three exceptions, from the reference:
// - top-level `permissions` rules append in layer order (the last matching rule wins);
// - `agents.<id>.permissions` rules append too ("definitions merge by ID … permission rules
//   append");
// - `plugins` merge by source: a later declaration of the same source replaces the earlier one
//   in place, a new source is appended, and `enabled: false` removes the source declared by an
//   earlier layer (the merged list holds only plugins to load).
import { pluginSource } from "./normalize.js";
import type { Config, PluginDeclaration } from "./types.js";

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const appends = (path: readonly string[]): boolean =>
  (path.length === 1 && path[0] === "permissions") ||
  (path.length === 3 && path[0] === "agents" && path[2] === "permissions");

function mergePlugins(base: readonly PluginDeclaration[], over: readonly PluginDeclaration[]): PluginDeclaration[] {
  const merged = [...base];
  for (const declaration of over) {
    const source = pluginSource(declaration);
    const index = merged.findIndex((existing) => pluginSource(existing) === source);
    if (typeof declaration !== "string" && declaration.enabled === false) {
      if (index >= 0) merged.splice(index, 1);
    } else if (index >= 0) {
      merged[index] = declaration;
    } else {
      merged.push(declaration);
    }
  }
  return merged;
}

function mergeValue(path: readonly string[], base: Json, over: Json): Json {
  if (appends(path) && Array.isArray(over)) {
    return [...(Array.isArray(base) ? base : []), ...over].map((rule) => structuredClone(rule));
  }
  if (path.length === 1 && path[0] === "plugins" && Array.isArray(over)) {
    return structuredClone(mergePlugins(Array.isArray(base) ? base : [], over as PluginDeclaration[]));
  }
  if (isObject(base) && isObject(over)) {
    const merged: Record<string, Json> = { ...base };
    for (const [key, value] of Object.entries(over)) {
      merged[key] = mergeValue([...path, key], base[key], value);
    }
    return merged;
  }
  if (isObject(over)) return mergeValue(path, {}, over); // so nested append/plugin rules apply to a fresh key
  return structuredClone(over);
}

/** Merges validated layers, lowest precedence first. Inputs are not modified; the result shares nothing with them. */
export function mergeConfigs(layers: readonly Config[]): Config {
  let merged: Json = {};
  for (const layer of layers) merged = mergeValue([], merged, layer);
  return structuredClone(merged) as Config;
}
