// Turns a Request into the validated input a handler receives: path parameters,
// query values (coerced from strings where the contract says integer/number/boolean),
// headers and a JSON body read under a byte limit, each checked with the contract's
// zod schema. Any failure is a ValidationError that names the part and the field.
import type { ZodType } from "zod";
import type { ValidationErrorEncoded } from "../../generated/client/types.gen.js";
import type { RouteDefinition, ParamKind } from "../../generated/server/routes.js";
import { MAX_REQUEST_BODY_BYTES, readBounded } from "../contract/body.js";
import { Failure, validationFailure } from "../contract/failure.js";
import { readDecoded, SUPPORTED_CONTENT_ENCODINGS, UndecodableBody, type ContentEncoding } from "./decode.js";
import { describeIssues, pointer, type Issue } from "./issues.js";
import { decodeBodyText, firstUnknownField, parseJsonBody } from "./json.js";

/** Largest request body accepted, after any Content-Encoding is decoded (the contract's 1 MiB wire bound). */
export { MAX_REQUEST_BODY_BYTES };
/** Largest header section accepted: every `name: value` field line, CRLF included. */
export const MAX_REQUEST_HEADER_BYTES = 16 * 1024;
/** Largest request target accepted: the path and the query. */
export const MAX_REQUEST_TARGET_BYTES = 8 * 1024;

export const HEADERS_TOO_LARGE_MESSAGE = `Request headers exceed the ${MAX_REQUEST_HEADER_BYTES}-byte limit`;
export const TARGET_TOO_LONG_MESSAGE = `The request path and query exceed the ${MAX_REQUEST_TARGET_BYTES}-byte limit`;

export interface ValidatedInput {
  path?: unknown;
  query?: unknown;
  headers?: unknown;
  body?: unknown;
}

/** A request refused for its size before anything else is looked at, with the status to answer. */
export interface Oversized {
  readonly status: 414 | 431;
  readonly error: ValidationErrorEncoded;
}

/** A body over the limit: a ValidationError answered as 413, not the 400 its `_tag` maps to. */
export class BodyTooLarge extends Failure {
  readonly status = 413;
  constructor(limit: number) {
    super({ _tag: "ValidationError", message: `Request body exceeds the ${limit}-byte limit` });
  }
}

/**
 * On a Request from the Node listener: the size of its header section as the parser read it
 * (each field line's name and value, plus 4 for `: ` and CRLF), so that this check need not
 * build a Headers object to count it (services/host/listen.ts).
 */
export const HEADER_BYTES: unique symbol = Symbol("ze-harness.header-bytes");

/**
 * The network listener lets far larger headers through its parser so that this check, not a
 * bare parser error, answers them; the embedded client has no parser at all.
 */
export function checkRequestSize(request: Request, url: URL): Oversized | undefined {
  const counted = (request as Request & { [HEADER_BYTES]?: number })[HEADER_BYTES];
  let headerBytes = 0;
  // Header values are byte strings, so their length is their size on the wire.
  if (typeof counted === "number") headerBytes = counted;
  else for (const [name, value] of request.headers) headerBytes += name.length + value.length + 4;
  if (headerBytes > MAX_REQUEST_HEADER_BYTES) return { status: 431, error: { _tag: "ValidationError", message: HEADERS_TOO_LARGE_MESSAGE } };
  // The URL parser percent-encodes anything outside ASCII, so length is bytes here too.
  if (url.pathname.length + url.search.length > MAX_REQUEST_TARGET_BYTES) {
    return { status: 414, error: { _tag: "ValidationError", message: TARGET_TOO_LONG_MESSAGE } };
  }
  return undefined;
}

function coerce(value: string, kind: ParamKind): unknown {
  if (kind === "string") return value;
  if (kind === "boolean") return value === "true" ? true : value === "false" ? false : value;
  const number = Number(value);
  return value.trim() === "" || Number.isNaN(number) ? value : number;
}

/**
 * `body.prompt.0.type (/prompt/0/type)`: the dotted label every ValidationError of the API uses
 * (`query.limit`, `path.sessionId`), then the field's JSON pointer within that part, which stays
 * exact when a key holds a dot or a slash. The whole part is just `body`.
 */
export function fieldLabel(part: string, path: readonly PropertyKey[]): string {
  if (path.length === 0) return part;
  return `${[part, ...path.map(String)].join(".")} (${pointer(path)})`;
}

function validate(part: string, schema: ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const detail = describeIssues(result.error.issues as readonly Issue[])
    .slice(0, 5)
    .map((problem) => `${fieldLabel(part, problem.path)}: ${problem.text}`)
    .join("; ");
  throw validationFailure(`Invalid request: ${detail}`);
}

/** The codings applied to the body, in the order they were applied; `identity` is no coding. */
function contentEncodings(request: Request): ContentEncoding[] {
  const header = request.headers.get("content-encoding");
  if (header === null) return [];
  const codings: ContentEncoding[] = [];
  for (const raw of header.split(",")) {
    const coding = raw.trim().toLowerCase();
    if (coding === "" || coding === "identity") continue;
    // RFC 9110: x-gzip is an alias of gzip.
    const name = coding === "x-gzip" ? "gzip" : coding;
    if (!(SUPPORTED_CONTENT_ENCODINGS as readonly string[]).includes(name)) {
      throw validationFailure(
        `Invalid request: Content-Encoding ${JSON.stringify(coding)} is not supported (supported: ${SUPPORTED_CONTENT_ENCODINGS.join(", ")}, identity)`,
      );
    }
    codings.push(name as ContentEncoding);
  }
  return codings;
}

async function readBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyTooLarge(limit);
  const encodings = contentEncodings(request);
  let bytes: Uint8Array | "too_large";
  if (encodings.length === 0 && declared !== null && /^\d+$/.test(declared)) {
    // A declared length within the limit: read whole. The HTTP parser frames the body by it (an
    // in-process Request is checked after the read), and Node's listener reads it straight from
    // the socket this way (no web stream and no full Request built around it: ≈ 4 % of a warm
    // host's CPU per one-step Turn went to that, issue 21 §2).
    const whole = new Uint8Array(await request.arrayBuffer());
    bytes = whole.byteLength > limit ? "too_large" : whole;
  } else if (encodings.length === 0) {
    // Not awaiting the cancel: a teed body (a cloned Request) cancels only when every branch does.
    bytes = await readBounded(request.body, limit, { awaitCancel: false });
  } else {
    try {
      bytes = await readDecoded(request.body, encodings, limit);
    } catch (error) {
      if (!(error instanceof UndecodableBody)) throw error;
      throw validationFailure(`Invalid request: the body could not be decoded as ${encodings.join(", ")}`);
    }
  }
  if (bytes === "too_large") throw new BodyTooLarge(limit);
  return decodeBodyText(bytes);
}

/**
 * Reads and drops the body of a request refused before its body was read (an unknown route, a
 * guard, a bad parameter), up to the body limit, keeping none of it: workerd closes a connection
 * whose request body was left unread once it has answered, and a client that reused the
 * kept-alive connection meanwhile sees ECONNRESET on its next request. Node's listener drains an
 * unread body itself after the answer (its requests carry HEADER_BYTES), so nothing is read there
 * and its refusals go out at once. A body declared over the limit is left alone (that connection
 * closes either way); a failed read changes nothing about the answer.
 */
export async function discardUnreadBody(request: Request, limit: number = MAX_REQUEST_BODY_BYTES): Promise<void> {
  if ((request as Request & { [HEADER_BYTES]?: number })[HEADER_BYTES] !== undefined) return;
  if (request.bodyUsed || Number(request.headers.get("content-length") ?? 0) > limit) return;
  const body = request.body;
  if (body === null) return;
  try {
    const reader = body.getReader();
    for (let size = 0; size <= limit; ) {
      const { done, value } = await reader.read();
      if (done) return;
      size += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // the client went away or sent a broken body: nothing to keep the connection for
  }
}

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
      if (values.length > 1) throw validationFailure(`Invalid request: ${fieldLabel("query", [definition.name])}: given more than once`);
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
      body = parseJsonBody(text);
    }
    if (body === undefined) input.body = undefined;
    else {
      const validated = validate("body", route.schemas.body, body);
      const unknown = firstUnknownField(body, validated);
      if (unknown !== undefined) throw validationFailure(`Invalid request: ${fieldLabel("body", unknown)}: is not a field of this request`);
      input.body = validated;
    }
  }
  return input;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Identifiers are lower-case UUIDs: `…0A` and `…0a` name the same Session, Turn or request. */
function lowerCaseIds(params: Record<string, string>): Record<string, string> {
  const lowered: Record<string, string> = {};
  for (const name in params) {
    const value = params[name]!;
    lowered[name] = UUID.test(value) ? value.toLowerCase() : value;
  }
  return lowered;
}

function acceptsNull(schema: ZodType | undefined): boolean {
  return schema ? schema.safeParse(null).success : false;
}
