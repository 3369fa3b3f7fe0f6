// Values a schema accepts, drawn at random: the "valid" half of the fuzzer. Every keyword the
// contract's document uses is understood ($ref, allOf, oneOf/anyOf beside properties, enum,
// const, type lists, formats, length, count and range bounds, additionalProperties); a schema
// of `{}` (an open `unknown` field) gets arbitrary JSON. Identifiers come from the harvested
// pools (real Sessions, Turns, terminals) most of the time, so requests reach real resources.
// Nothing drawn here names a host off this machine: URLs point at a closed loopback port and
// commands are harmless, so a valid plugin, MCP or terminal body never reaches the internet
// or runs anything that matters.
import type { Contract, Schema } from "./document.js";
import type { Random } from "./random.js";

/** Identifiers seen in answers, by name (`sessionId`, `turnId`, `terminalId`, …). */
export type Pools = Map<string, string[]>;

export interface ValueContext {
  readonly random: Random;
  readonly contract: Contract;
  readonly pools: Pools;
}

/** A loopback port nothing listens on (discard): a URL the server might fetch fails at once. */
export const CLOSED_URL = "http://127.0.0.1:9";

const SAFE_COMMANDS: readonly (readonly string[])[] = [["true"], ["cat"], ["/nonexistent/ze-fuzz"]];

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Strings that have broken parsers, paths and encoders before. */
export const INTERESTING_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "\t\r\n",
  "../../../../etc/passwd",
  "/etc/passwd",
  "%2e%2e%2f",
  "a/b",
  "*",
  "?",
  "\\",
  "'\"`;--",
  "${HOME}",
  "$(id)",
  "\u202e\u0645\u0631\u062d\u0628\u0627",
  "😀👍🏽",
  "\ud800",
  "\udfff\ud800",
  "\uffff\ufffe",
  "NaN",
  "-0",
  "1e309",
  "9007199254740993",
  "null",
  "true",
  "local",
  "test/scripted",
  "__proto__",
  "constructor",
];

export function randomText(random: Random, min = 0, max = 24): string {
  const length = random.int(min, Math.max(min, max));
  const alphabet = random.chance(0.85) ? ALPHANUMERIC : `${ALPHANUMERIC} -_./:~%+=@#é中\u00a0\u2028`;
  let text = "";
  for (let index = 0; index < length; index++) text += alphabet[random.int(0, alphabet.length - 1)];
  return text;
}

/** A harvested identifier named `name` (or a fresh UUID when none was seen). */
export function pooledId(context: ValueContext, name: string): string {
  const pool = context.pools.get(name);
  if (pool && pool.length > 0 && context.random.chance(0.8)) return context.random.pick(pool);
  return context.random.uuid();
}

const isObjectSchema = (schema: Schema): boolean => schema["type"] === "object" || schema["properties"] !== undefined || schema["additionalProperties"] !== undefined;

/** Arbitrary JSON for an open (`unknown`) field: scalars, arrays and objects a few levels deep. */
export function anyJson(random: Random, depth = 0): unknown {
  const kind = random.int(0, depth > 3 ? 3 : 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return random.chance(0.5) ? random.int(-1000, 1000) : random.next() * 1e6;
    case 3:
      return random.chance(0.2) ? random.pick(INTERESTING_STRINGS) : randomText(random);
    case 4:
      return Array.from({ length: random.int(0, 3) }, () => anyJson(random, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: random.int(0, 3) }, () => [randomText(random, 1, 8), anyJson(random, depth + 1)]));
  }
}

function stringFor(schema: Schema, context: ValueContext, name: string): string {
  const { random } = context;
  const min = typeof schema["minLength"] === "number" ? schema["minLength"] : 0;
  const max = typeof schema["maxLength"] === "number" ? schema["maxLength"] : 32;
  if (schema["format"] === "uuid" || /Id$/.test(name)) return pooledId(context, /Id$/.test(name) ? name : "id");
  if (schema["format"] === "date-time") return new Date(random.int(0, 2_000_000_000) * 1000).toISOString();
  if (/url|uri|issuer|endpoint|href|redirect/i.test(name)) return `${CLOSED_URL}/fuzz/${randomText(random, 0, 8)}`;
  if (name === "model" && random.chance(0.7)) return "test/scripted";
  if (name === "agent" && random.chance(0.7)) return random.pick(["build", "plan", "general"]);
  if (random.chance(0.08)) return random.pick(INTERESTING_STRINGS);
  return randomText(random, min, Math.min(max, Math.max(min, 32)));
}

function numberFor(schema: Schema, random: Random, integer: boolean): number {
  const minimum = typeof schema["minimum"] === "number" ? schema["minimum"] : typeof schema["exclusiveMinimum"] === "number" ? schema["exclusiveMinimum"] + 1 : undefined;
  const maximum = typeof schema["maximum"] === "number" ? schema["maximum"] : typeof schema["exclusiveMaximum"] === "number" ? schema["exclusiveMaximum"] - 1 : undefined;
  const low = minimum ?? (random.chance(0.8) ? 0 : -1000);
  const high = maximum ?? low + (random.chance(0.9) ? 100 : 1_000_000);
  if (random.chance(0.2)) return random.pick([low, high]);
  const value = low + random.next() * (high - low);
  return integer ? Math.min(high, Math.max(low, Math.round(value))) : value;
}

/** A value `schema` accepts; `name` is the property it is for (it picks pools and safe hints). */
export function validValue(schema: Schema, context: ValueContext, name = "", depth = 0): unknown {
  const { random, contract } = context;
  if (typeof schema["$ref"] === "string") return validValue(contract.resolve(schema), context, name, depth + 1);
  if ("const" in schema) return schema["const"];
  if (Array.isArray(schema["enum"])) return random.pick(schema["enum"]);
  if (name === "command" && schema["type"] === "array") return [...random.pick(SAFE_COMMANDS)];
  if (Array.isArray(schema["allOf"])) {
    const parts = (schema["allOf"] as Schema[]).map((part) => validValue(part, context, name, depth + 1));
    const own = isObjectSchema(schema) ? validValue({ ...schema, allOf: undefined }, context, name, depth + 1) : undefined;
    if (parts.every((part) => part !== null && typeof part === "object" && !Array.isArray(part))) return Object.assign({}, ...(parts as object[]), own ?? {});
    return parts[0];
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    const members = schema[key];
    if (!Array.isArray(members)) continue;
    const nonNull = (members as Schema[]).filter((member) => member["type"] !== "null");
    const member = nonNull.length > 0 && random.chance(0.95) ? random.pick(nonNull) : random.pick(members as Schema[]);
    const value = validValue(member, context, name, depth + 1);
    if (isObjectSchema(schema) && value !== null && typeof value === "object" && !Array.isArray(value)) {
      const rest: Record<string, unknown> = { ...schema };
      delete rest[key];
      delete rest["discriminator"];
      return { ...(validValue(rest, context, name, depth + 1) as object), ...value };
    }
    return value;
  }
  const types = Array.isArray(schema["type"]) ? (schema["type"] as string[]) : typeof schema["type"] === "string" ? [schema["type"] as string] : [];
  const type = types.length === 0 ? (isObjectSchema(schema) ? "object" : undefined) : types.length === 1 ? types[0] : random.pick(types.filter((t) => t !== "null").length > 0 && random.chance(0.9) ? types.filter((t) => t !== "null") : types);
  switch (type) {
    case undefined:
      return anyJson(random);
    case "null":
      return null;
    case "boolean":
      return random.chance(0.5);
    case "string":
      return stringFor(schema, context, name);
    case "integer":
    case "number":
      return numberFor(schema, random, type === "integer");
    case "array": {
      const min = typeof schema["minItems"] === "number" ? schema["minItems"] : 0;
      const max = typeof schema["maxItems"] === "number" ? schema["maxItems"] : min + 3;
      const length = depth > 10 ? min : random.int(min, Math.min(max, min + 3));
      const items = (schema["items"] as Schema | undefined) ?? {};
      return Array.from({ length }, () => validValue(items, context, name.replace(/s$/, ""), depth + 1));
    }
    default: {
      const properties = (schema["properties"] as Record<string, Schema> | undefined) ?? {};
      const required = new Set((schema["required"] as string[] | undefined) ?? []);
      const value: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(properties)) {
        if (required.has(key) || (depth < 8 && random.chance(0.35))) value[key] = validValue(property, context, key, depth + 1);
      }
      const extra = schema["additionalProperties"];
      if (extra !== undefined && extra !== false && depth < 8) {
        for (let count = random.int(0, 2); count > 0; count--) value[randomText(random, 1, 10)] = extra === true ? anyJson(random) : validValue(extra as Schema, context, "", depth + 1);
      }
      return value;
    }
  }
}
