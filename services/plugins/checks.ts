// Shared checks for what plugins hand to Core: plain JSON, identifiers, display text, JSON Schema
// documents, safe failure messages. Every check returns a problem string (or undefined), never
// throws, and never runs code a value defines beyond reading plain data properties.
import { disallowedSchemaKeywords, validateToolInput } from "../tools/validate.js";
import type { JsonSchema as ToolJsonSchema } from "../tools/tool.js";

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `[a-z][a-z0-9]*([._-][a-z0-9]+)*`, the identifier of plugins, Skills, sources, transforms, MCP servers, providers. */
export const IDENTIFIER = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
export const MAX_IDENTIFIER_LENGTH = 128;

export const isIdentifier = (value: unknown, max = MAX_IDENTIFIER_LENGTH): value is string =>
  typeof value === "string" && value.length <= max && IDENTIFIER.test(value);

const CONTROL = /[\u0000-\u001f\u007f]/u;

/** Trimmed, NFC, non-empty text without control characters (`singleLine`: no newlines either, which control covers). */
export function displayText(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  if (value !== value.trim() || value !== value.normalize("NFC") || value === "" || value.length > max || CONTROL.test(value)) return undefined;
  return value;
}

/**
 * Why `value` is not plain JSON (the first problem, as a JSON pointer), or undefined. Plain JSON:
 * strings, finite numbers, booleans, null, arrays, and objects whose prototype is Object or null,
 * with no member set to `undefined`. Cycles are refused.
 */
export function jsonProblem(value: unknown, pointer = "", seen: Set<object> = new Set()): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${pointer || "/"} is not a finite number`;
    case "object": {
      if (value === null) return undefined;
      if (seen.has(value)) return `${pointer || "/"} is circular`;
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          for (let index = 0; index < value.length; index++) {
            if (!(index in value)) return `${pointer}/${index} is missing`;
            const problem = jsonProblem(value[index], `${pointer}/${index}`, seen);
            if (problem) return problem;
          }
          return undefined;
        }
        const prototype = Object.getPrototypeOf(value) as unknown;
        if (prototype !== Object.prototype && prototype !== null) return `${pointer || "/"} is not a plain object`;
        for (const key of Object.keys(value)) {
          const member = (value as Record<string, unknown>)[key];
          if (member === undefined) return `${pointer}/${key} is undefined`;
          const problem = jsonProblem(member, `${pointer}/${key}`, seen);
          if (problem) return problem;
        }
        return undefined;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return `${pointer || "/"} is not JSON (${typeof value})`;
  }
}

/** An owned deep copy of a JSON value (checked first with {@link jsonProblem}). */
export const copyJson = <T>(value: T): T => structuredClone(value);

/**
 * Why `schema` is not an acceptable plugin JSON Schema, or undefined: plain JSON, an object root
 * with `type: "object"`, only the reference's keywords, local `$ref`s, and one Ajv (draft 2020-12,
 * strict) accepts.
 */
export function schemaProblem(schema: unknown): string | undefined {
  const json = jsonProblem(schema);
  if (json) return `the schema is not plain JSON: ${json}`;
  if (!isRecord(schema) || schema["type"] !== "object") return 'the schema root must be { "type": "object", … }';
  const disallowed = disallowedSchemaKeywords(schema);
  if (disallowed.length > 0) return `the schema uses keywords outside the supported set: ${disallowed.slice(0, 5).join(", ")}`;
  const refs: string[] = [];
  collectRefs(schema, refs);
  const external = refs.find((ref) => !ref.startsWith("#"));
  if (external !== undefined) return `the schema references ${JSON.stringify(external)}; only local "#/…" references are supported`;
  try {
    // Compiles (and caches) the schema the way tool inputs are validated.
    validateToolInput({ id: "schema", description: "", inputSchema: schema as ToolJsonSchema, permissions: () => [], execute: async () => ({ result: { format: "text", value: "" } }) }, {});
  } catch (error) {
    return `the schema does not compile: ${error instanceof Error ? error.message.split("\n")[0] : "invalid schema"}`;
  }
  return undefined;
}

function collectRefs(value: unknown, into: string[]): void {
  if (Array.isArray(value)) for (const item of value) collectRefs(item, into);
  else if (isRecord(value)) {
    for (const [key, member] of Object.entries(value)) {
      if (key === "$ref" && typeof member === "string") into.push(member);
      else if (key !== "enum" && key !== "const") collectRefs(member, into);
    }
  }
}

/** The trimmed, non-blank `publicMessage` of a thrown value (cut to `max`), else undefined. Reads only an own data property. */
export function publicMessageOf(error: unknown, max = 4096): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  let value: unknown;
  try {
    const descriptor = Object.getOwnPropertyDescriptor(error, "publicMessage");
    value = descriptor && "value" in descriptor ? descriptor.value : undefined;
  } catch {
    return undefined;
  }
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return value.trim().slice(0, max);
}

/** Whether `error` is tagged `tag` by an own data property (any copy of the contract). */
export function hasTag(error: unknown, tag: string): boolean {
  if ((typeof error !== "object" && typeof error !== "function") || error === null) return false;
  try {
    const descriptor = Object.getOwnPropertyDescriptor(error, "_tag");
    return descriptor !== undefined && "value" in descriptor && descriptor.value === tag;
  } catch {
    return false;
  }
}

/** Whether `text` holds an unpaired UTF-16 surrogate. */
export const hasLoneSurrogate = (text: string): boolean => /[\uD800-\uDFFF]/u.test(text);

/** A `provider/model` reference. */
export const MODEL_REFERENCE = /^[^/]+\/.+$/s;
