// Turns a Request into the validated input a handler receives: path parameters,
// query values (coerced from strings where the contract says integer/number/boolean),
// headers and a JSON body read under a byte limit, each checked with the contract's
// zod schema. Any failure is a ValidationError that names the part and the field.
import type { ZodType } from "zod";
import type { RouteDefinition, ParamKind } from "../../generated/server/routes.js";
import { Failure, validationFailure } from "../contract/failure.js";

/** Largest request body accepted (the reference's 1 MiB wire bound). */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

export interface ValidatedInput {
  path?: unknown;
  query?: unknown;
  headers?: unknown;
  body?: unknown;
}

function coerce(value: string, kind: ParamKind): unknown {
  if (kind === "string") return value;
  if (kind === "boolean") return value === "true" ? true : value === "false" ? false : value;
  const number = Number(value);
  return value.trim() === "" || Number.isNaN(number) ? value : number;
}

function validate(part: string, schema: ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const detail = result.error.issues
    .slice(0, 5)
    .map((issue) => `${[part, ...issue.path.map(String)].join(".")}: ${issue.message}`)
    .join("; ");
  throw validationFailure(`Invalid request: ${detail}`);
}

async function readBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Not awaited: a teed body (a cloned Request) cancels only when every branch does.
      void reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const tooLarge = (limit: number): Failure => validationFailure(`Request body exceeds the ${limit}-byte limit`);

export async function readInput(
  request: Request,
  route: RouteDefinition,
  params: Record<string, string>,
  url: URL,
  bodyLimit: number = MAX_REQUEST_BODY_BYTES,
): Promise<ValidatedInput> {
  const input: ValidatedInput = {};
  if (route.pathParams.length > 0) input.path = validate("path", route.schemas.path, lowerCaseIds(params));

  if (route.query.length > 0) {
    const query: Record<string, unknown> = {};
    for (const definition of route.query) {
      const values = url.searchParams.getAll(definition.name);
      if (values.length > 1) throw validationFailure(`Invalid request: query.${definition.name}: given more than once`);
      if (values.length === 1) query[definition.name] = coerce(values[0]!, definition.kind);
    }
    input.query = validate("query", route.schemas.query, query);
  }

  if (route.headers.length > 0) {
    const headers: Record<string, string> = {};
    for (const definition of route.headers) {
      const value = request.headers.get(definition.name);
      if (value !== null) headers[definition.name] = value;
    }
    input.headers = validate("headers", route.schemas.headers, headers);
  }

  if (route.hasBody) {
    const text = await readBody(request, bodyLimit);
    let body: unknown;
    if (text.trim() === "") {
      if (route.bodyRequired && !acceptsNull(route.schemas.body)) throw validationFailure("Invalid request: a JSON body is required");
      body = route.bodyRequired ? null : undefined;
    } else {
      const type = request.headers.get("content-type") ?? "";
      if (!/^application\/(.+\+)?json\b/i.test(type)) throw validationFailure("Invalid request: the body must be application/json");
      try {
        body = JSON.parse(text);
      } catch {
        throw validationFailure("Invalid request: the body is not valid JSON");
      }
    }
    input.body = body === undefined ? undefined : validate("body", route.schemas.body, body);
  }
  return input;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Identifiers are lower-case UUIDs: `…0A` and `…0a` name the same Session, Turn or request. */
function lowerCaseIds(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, UUID.test(value) ? value.toLowerCase() : value]));
}

function acceptsNull(schema: ZodType | undefined): boolean {
  return schema ? schema.safeParse(null).success : false;
}
