// Tool input validation against each tool's JSON Schema (draft 2020-12), compiled once per tool
// schema and cached. Runs BEFORE `permissions` and `execute`. Failures list every problem
// Ajv found, each located by a JSON pointer into the input, in a message safe for the model
// (it only describes the model's own input). Ajv itself is loaded on the first tool call that
// needs it, not when this module is imported: loading and setting it up costs tens of
// milliseconds that a one-shot answering in text (`run "hello"`) would pay for nothing.
import { createRequire } from "node:module";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { ToolFailure, type ToolDefinition } from "./tool.js";

/** Keywords a tool `inputSchema` may use (the reference's `JsonSchema`). */
export const ALLOWED_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  "$schema", "$comment", "$defs", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
  "type", "const", "enum", "title", "description", "properties", "required", "additionalProperties",
  "propertyNames", "dependentRequired", "dependentSchemas", "minProperties", "maxProperties",
  "prefixItems", "items", "contains", "minContains", "maxContains", "minItems", "maxItems",
  "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "minLength", "maxLength",
]);

let shared: Ajv2020 | undefined;
// Made on first use: a host without `import.meta.url` (the Worker bundle) imports this module
// too, and never compiles with Ajv (it installs an interpreter).
function ajv(): Ajv2020 {
  if (shared === undefined) {
    const { Ajv2020: Ajv } = createRequire(import.meta.url)("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
    shared = new Ajv({ strict: true, allErrors: true });
  }
  return shared;
}

/** A schema's check: whether `input` passes, and each problem (as `describe` words Ajv's errors) when not. */
type SchemaCheck = (input: unknown) => readonly string[];

/**
 * A validator that generates no code, for hosts that forbid it: workerd refuses Ajv's compiled
 * functions once the Worker's startup is over ("Code generation from strings disallowed"), so
 * the Worker host installs an interpreting validator (worker/validation.ts), used for every
 * schema there. Node never sets one.
 */
export type SchemaInterpreter = (schema: object) => SchemaCheck;
let interpreter: SchemaInterpreter | undefined;
export function useSchemaInterpreter(next: SchemaInterpreter): void {
  interpreter = next;
}

// Keyed by the schema object: tools built per use over shared schema constants (the Worker's
// file tools over each object's store) compile once.
const compiled = new WeakMap<object, SchemaCheck>();

function compile(schema: object): SchemaCheck {
  // A host that installed an interpreter forbids generated code: Ajv is never asked there.
  if (interpreter !== undefined) return interpreter(schema);
  const validate: ValidateFunction = ajv().compile(schema);
  return (input) => (validate(input) ? [] : [...new Set((validate.errors ?? []).map(describe))]);
}

function validatorFor(tool: ToolDefinition<unknown>): SchemaCheck {
  const schema = tool.inputSchema as object;
  let check = compiled.get(schema);
  if (!check) {
    check = compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

function describe(error: ErrorObject): string {
  const at = error.instancePath === "" ? "input" : `input${error.instancePath}`;
  switch (error.keyword) {
    case "required":
      return `${at} is missing required property ${JSON.stringify(error.params["missingProperty"])}`;
    case "additionalProperties":
      return `${at} has unknown property ${JSON.stringify(error.params["additionalProperty"])}`;
    case "enum":
      return `${at} must be one of ${(error.params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return `${at} ${error.message ?? "is invalid"}`;
  }
}

export type ToolInputValidation<I> =
  | { readonly ok: true; readonly input: I }
  | { readonly ok: false; readonly failure: ToolFailure; readonly problems: readonly string[] };

/** Validates `input` against `tool.inputSchema`. */
export function validateToolInput<I>(tool: ToolDefinition<I>, input: unknown): ToolInputValidation<I> {
  const problems = validatorFor(tool as ToolDefinition<unknown>)(input);
  if (problems.length === 0) return { ok: true, input: input as I };
  const failure = new ToolFailure("invalid_input", `Tool input validation failed: ${problems.join("; ")}.`);
  return { ok: false, failure, problems };
}

/** Keywords in `schema` (recursively) outside {@link ALLOWED_SCHEMA_KEYWORDS}, as JSON pointers. */
export function disallowedSchemaKeywords(schema: unknown, pointer = ""): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => disallowedSchemaKeywords(item, `${pointer}/${i}`));
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    const at = `${pointer}/${key}`;
    if (!ALLOWED_SCHEMA_KEYWORDS.has(key)) found.push(at);
    if (key === "properties" || key === "$defs" || key === "dependentSchemas") {
      for (const [name, sub] of Object.entries(value as object)) found.push(...disallowedSchemaKeywords(sub, `${at}/${name}`));
    } else if (key !== "enum" && key !== "const" && key !== "required" && key !== "dependentRequired") {
      found.push(...disallowedSchemaKeywords(value, at));
    }
  }
  return found;
}
