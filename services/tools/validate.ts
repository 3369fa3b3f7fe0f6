// Tool input validation against each tool's JSON Schema (draft 2020-12), compiled once per tool
// definition and cached. Runs BEFORE `permissions` and `execute`. Failures list every problem
// Ajv found, each located by a JSON pointer into the input, in a message safe for the model
// (it only describes the model's own input).
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
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

const ajv = new Ajv2020({ strict: true, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(tool: ToolDefinition<unknown>): ValidateFunction {
  let validate = compiled.get(tool);
  if (!validate) {
    validate = ajv.compile(tool.inputSchema);
    compiled.set(tool, validate);
  }
  return validate;
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
  const validate = validatorFor(tool as ToolDefinition<unknown>);
  if (validate(input)) return { ok: true, input: input as I };
  const problems = [...new Set((validate.errors ?? []).map(describe))];
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
