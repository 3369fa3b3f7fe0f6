// The contract as the fuzzer reads it: generated/openapi.json turned into a list of operations
// (method, path template, parameters, body schema, declared responses) and a matcher that finds
// which operation, if any, a request's method and path name. The matcher is written here, from
// the document, rather than borrowed from the server's router: the fuzzer checks the server
// against the contract, not against itself.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type Schema = { readonly [key: string]: unknown };

export interface Parameter {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly required: boolean;
  readonly schema: Schema;
}

export interface DeclaredResponse {
  /** Media type → schema; empty when the status declares no body (every HEAD response). */
  readonly content: Readonly<Record<string, Schema>>;
}

export interface Operation {
  readonly operationId: string;
  /** Upper-case: GET, HEAD, PUT, POST, DELETE, PATCH. */
  readonly method: string;
  /** e.g. /v1/servers/{server}/sessions/{sessionId} */
  readonly path: string;
  readonly parameters: readonly Parameter[];
  readonly body?: { readonly required: boolean; readonly schema: Schema };
  readonly responses: Readonly<Record<string, DeclaredResponse>>;
  readonly authenticated: boolean;
}

export interface Contract {
  readonly document: { readonly components: { readonly schemas: Readonly<Record<string, Schema>> } } & Record<string, unknown>;
  readonly operations: readonly Operation[];
  /** The operation a request's method and (already URL-parsed) pathname name, if any. */
  match(method: string, pathname: string): { operation: Operation; params: Record<string, string> } | undefined;
  resolve(schema: Schema): Schema;
}

export const documentPath = join(import.meta.dirname, "..", "..", "generated", "openapi.json");

const METHODS = ["get", "head", "put", "post", "delete", "patch"];

export function loadContract(path: string = documentPath): Contract {
  const document = JSON.parse(readFileSync(path, "utf8")) as Contract["document"] & {
    paths: Record<string, Record<string, Record<string, unknown>>>;
    security?: unknown[];
  };
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let hops = 0; typeof current["$ref"] === "string"; hops++) {
      if (hops > 50) throw new Error(`$ref cycle at ${String(current["$ref"])}`);
      const name = String(current["$ref"]).replace("#/components/schemas/", "");
      const next = document.components.schemas[name];
      if (next === undefined) throw new Error(`unresolved $ref ${String(current["$ref"])}`);
      current = next;
    }
    return current;
  };

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const parameters = ((raw["parameters"] as Parameter[] | undefined) ?? []).map((p) => ({ name: p.name, in: p.in, required: p.required === true, schema: p.schema ?? {} }));
      const requestBody = raw["requestBody"] as { required?: boolean; content: Record<string, { schema: Schema }> } | undefined;
      const bodySchema = requestBody?.content["application/json"]?.schema;
      const responses: Record<string, DeclaredResponse> = {};
      for (const [status, response] of Object.entries(raw["responses"] as Record<string, { content?: Record<string, { schema?: Schema }> }>)) {
        responses[status] = { content: Object.fromEntries(Object.entries(response.content ?? {}).map(([type, media]) => [type, media.schema ?? {}])) };
      }
      const security = (raw["security"] as unknown[] | undefined) ?? document.security ?? [];
      operations.push({
        operationId: String(raw["operationId"]),
        method: method.toUpperCase(),
        path,
        parameters,
        ...(bodySchema ? { body: { required: requestBody?.required === true, schema: bodySchema } } : {}),
        responses,
        authenticated: security.length > 0,
      });
    }
  }

  // Literal segments outrank parameters (`/permissions/saved` before `/permissions/{id}`).
  const compiled = operations
    .map((operation) => ({ operation, segments: operation.path.split("/").slice(1) }))
    .sort((a, b) => literalCount(b.segments) - literalCount(a.segments));

  const match = (method: string, pathname: string): { operation: Operation; params: Record<string, string> } | undefined => {
    const parts = pathname.split("/").slice(1);
    if (!pathname.startsWith("/") || parts.some((part) => part === "")) return undefined;
    for (const { operation, segments } of compiled) {
      if (operation.method !== method || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let matched = true;
      for (let index = 0; index < segments.length && matched; index++) {
        const segment = segments[index]!;
        const part = parts[index]!;
        if (segment.startsWith("{")) {
          try {
            params[segment.slice(1, -1)] = decodeURIComponent(part);
          } catch {
            matched = false;
          }
        } else matched = segment === part;
      }
      if (matched) return { operation, params };
    }
    return undefined;
  };

  return { document, operations, match, resolve };
}

const literalCount = (segments: readonly string[]): number => segments.filter((segment) => !segment.startsWith("{")).length;
