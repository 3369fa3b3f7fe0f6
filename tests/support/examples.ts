// Minimal valid request inputs built from generated/openapi.json: for any route, path
// parameters, required query values and headers, and the smallest body its JSON Schema
// accepts (required properties only, first union branch, minimum lengths and counts).
// Tests should still check the result against the route's zod schemas, so a schema
// feature this builder does not understand shows up as a failed check, not a silent pass.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RouteDefinition } from "../../generated/server/routes.js";

type Schema = Record<string, unknown>;

interface Parameter {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly required?: boolean;
  readonly schema?: Schema;
}

interface Operation {
  readonly operationId: string;
  readonly parameters?: (Parameter | { $ref: string })[];
  readonly requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
}

const documentPath = join(import.meta.dirname, "..", "..", "generated", "openapi.json");
export const openapiDocument = JSON.parse(readFileSync(documentPath, "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, Parameter> };
};

function resolveRef<T>(ref: string): T {
  const parts = ref.replace(/^#\//, "").split("/");
  let current: unknown = openapiDocument;
  for (const part of parts) current = (current as Record<string, unknown>)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  if (current === undefined) throw new Error(`unresolved $ref ${ref}`);
  return current as T;
}

/** The smallest value the schema accepts, as far as this builder understands JSON Schema. */
export function minimalValue(schema: Schema | undefined, depth = 0): unknown {
  if (depth > 40) throw new Error("schema nests too deeply for an example");
  if (schema === undefined || Object.keys(schema).length === 0) return {};
  if (typeof schema["$ref"] === "string") return minimalValue(resolveRef<Schema>(schema["$ref"]), depth + 1);
  if ("const" in schema) return schema["const"];
  if (Array.isArray(schema["enum"])) return schema["enum"][0];
  if (Array.isArray(schema["allOf"])) {
    const parts = (schema["allOf"] as Schema[]).map((part) => minimalValue(part, depth + 1));
    const own = schema["type"] === "object" || schema["properties"] ? minimalValue({ ...schema, allOf: undefined }, depth + 1) : undefined;
    if (parts.every((part) => part !== null && typeof part === "object" && !Array.isArray(part))) {
      return Object.assign({}, ...(parts as object[]), own ?? {});
    }
    return parts[0];
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    if (Array.isArray(schema[key])) {
      const branches = (schema[key] as Schema[]).filter((branch) => branch["type"] !== "null");
      const value = minimalValue(branches[0] ?? (schema[key] as Schema[])[0], depth + 1);
      // An object beside the union (e.g. shared properties) merges into the branch.
      if (schema["properties"] && value !== null && typeof value === "object") {
        return { ...(minimalValue({ ...schema, [key]: undefined, discriminator: undefined }, depth + 1) as object), ...value };
      }
      return value;
    }
  }
  const type = Array.isArray(schema["type"]) ? (schema["type"] as string[]).find((t) => t !== "null") : (schema["type"] as string | undefined);
  switch (type) {
    case "string": {
      if (schema["format"] === "uuid") return randomUUID();
      if (schema["format"] === "date-time") return new Date(0).toISOString();
      if (schema["format"] === "uri" || schema["format"] === "url") return "https://example.com/";
      const min = typeof schema["minLength"] === "number" ? schema["minLength"] : 1;
      return "x".repeat(Math.max(1, min));
    }
    case "integer":
    case "number": {
      const min = typeof schema["minimum"] === "number" ? schema["minimum"] : 0;
      const exclusive = typeof schema["exclusiveMinimum"] === "number" ? schema["exclusiveMinimum"] + 1 : undefined;
      return exclusive ?? min;
    }
    case "boolean":
      return false;
    case "array": {
      const count = typeof schema["minItems"] === "number" ? schema["minItems"] : 0;
      return Array.from({ length: count }, () => minimalValue(schema["items"] as Schema | undefined, depth + 1));
    }
    case "null":
      return null;
    case "object":
    default: {
      const properties = (schema["properties"] ?? {}) as Record<string, Schema>;
      const required = (schema["required"] ?? []) as string[];
      const value: Record<string, unknown> = {};
      for (const name of required) value[name] = minimalValue(properties[name], depth + 1);
      return value;
    }
  }
}

function operationOf(route: RouteDefinition): Operation {
  const item = openapiDocument.paths[route.path];
  const operation = item?.[route.method.toLowerCase()];
  if (!operation || operation.operationId !== route.operationId) throw new Error(`no operation ${route.operationId} at ${route.method} ${route.path}`);
  return operation;
}

function parametersOf(operation: Operation): Parameter[] {
  return (operation.parameters ?? []).map((parameter) => ("$ref" in parameter ? resolveRef<Parameter>(parameter.$ref) : parameter));
}

export interface ExampleRequest {
  readonly path: Record<string, string>;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  /** undefined when the operation takes no body. */
  readonly body: unknown;
  /** The concrete URL path (server `local`). */
  readonly pathname: string;
}

/** A request the route's schemas should accept: every required part, nothing optional. */
export function exampleRequest(route: RouteDefinition, server = "local"): ExampleRequest {
  const operation = operationOf(route);
  const path: Record<string, string> = {};
  const query: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const parameter of parametersOf(operation)) {
    if (parameter.in === "path") {
      path[parameter.name] = parameter.name === "server" ? server : String(minimalValue(parameter.schema));
    } else if (parameter.required && parameter.in === "query") {
      query[parameter.name] = parameter.schema?.["type"] === "string" && parameter.schema["format"] === undefined ? "0" : String(minimalValue(parameter.schema));
    } else if (parameter.required && parameter.in === "header") {
      headers[parameter.name] = "ze-harness-tests";
    }
  }
  const bodySchema = operation.requestBody?.content["application/json"]?.schema;
  const body = operation.requestBody ? minimalValue(bodySchema) : undefined;
  const pathname = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(path[name]!));
  return { path, query, headers, body, pathname };
}

/** Builds a Request for the example against `baseUrl`. */
export function exampleHttpRequest(route: RouteDefinition, example: ExampleRequest, baseUrl = "http://localhost"): Request {
  const url = new URL(example.pathname, baseUrl);
  for (const [name, value] of Object.entries(example.query)) url.searchParams.set(name, value);
  const headers = new Headers(example.headers);
  let body: string | undefined;
  if (example.body !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(example.body);
  }
  return new Request(url, { method: route.method, headers, ...(body !== undefined ? { body } : {}) });
}
