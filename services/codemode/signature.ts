// What a script learns about a tool: its path (`tools.read`), a TypeScript-like signature rendered
// from its input schema (nested schemas past SIGNATURE_SCHEMA_DEPTH abbreviate to `…`), its
// description and the schema itself. `search` returns these; the `execute` tool lists them.
import { SIGNATURE_SCHEMA_DEPTH } from "./limits.js";

/** One tool as `search` describes it. */
export interface ToolSignature {
  readonly id: string;
  /** How a script reaches it: `tools.read`, or `tools["my-tool"]` for an id that is not an identifier. */
  readonly path: string;
  readonly description: string;
  /** `tools.read(input: { path: string; offset?: number }): Promise<unknown>` */
  readonly signature: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** The expression that reaches tool `id` inside a script. */
export const toolPath = (id: string): string => (IDENTIFIER.test(id) ? `tools.${id}` : `tools[${JSON.stringify(id)}]`);

export function toolSignature(id: string, description: string, inputSchema: Readonly<Record<string, unknown>>): ToolSignature {
  const path = toolPath(id);
  return { id, path, description, signature: `${path}(input: ${schemaType(inputSchema)}): Promise<unknown>`, inputSchema };
}

/** A JSON Schema as a TypeScript-like type expression. */
export function schemaType(schema: unknown, depth = 1): string {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "unknown";
  if (depth > SIGNATURE_SCHEMA_DEPTH) return "…";
  const s = schema as Record<string, unknown>;
  if ("const" in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.length === 0 ? "never" : s.enum.map(literal).join(" | ");
  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alternatives) return alternatives.length === 0 ? "never" : alternatives.map((alt) => member(schemaType(alt, depth + 1))).join(" | ");
  if (Array.isArray(s.allOf)) return s.allOf.length === 0 ? "unknown" : s.allOf.map((part) => member(schemaType(part, depth + 1))).join(" & ");
  const types = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : undefined;
  if (!types) return "properties" in s ? objectType(s, depth) : "unknown";
  return types.map((type) => member(typeOf(String(type), s, depth))).join(" | ");
}

function typeOf(type: string, s: Record<string, unknown>, depth: number): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (Array.isArray(s.prefixItems)) return `[${s.prefixItems.map((item) => schemaType(item, depth + 1)).join(", ")}${s.items === false ? "" : ", ...unknown[]"}]`;
      return `${member(schemaType(s.items, depth + 1))}[]`;
    case "object":
      return objectType(s, depth);
    default:
      return "unknown";
  }
}

function objectType(s: Record<string, unknown>, depth: number): string {
  const properties = typeof s.properties === "object" && s.properties !== null ? (s.properties as Record<string, unknown>) : {};
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  const fields = Object.entries(properties).map(
    ([name, property]) => `${IDENTIFIER.test(name) ? name : JSON.stringify(name)}${required.has(name) ? "" : "?"}: ${schemaType(property, depth + 1)}`,
  );
  const extra = s.additionalProperties;
  if (extra !== false && (extra !== undefined || fields.length === 0)) fields.push(`[key: string]: ${schemaType(extra, depth + 1)}`);
  return fields.length === 0 ? "{}" : `{ ${fields.join("; ")} }`;
}

const literal = (value: unknown): string => (value === undefined ? "undefined" : JSON.stringify(value));

/** Parenthesizes a union or intersection used inside a larger type. */
function member(type: string): string {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (c === '"') {
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === "\\") i++;
    } else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (depth === 0 && (c === "|" || c === "&")) return `(${type})`;
  }
  return type;
}
