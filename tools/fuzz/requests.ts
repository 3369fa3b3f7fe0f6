// One fuzz request: a valid request for an operation, built from its parameters and body schema,
// then (most of the time) one mutation of it — a field missing, extra, null or of the wrong type,
// a huge string, deep nesting, bad UTF-8, a lone surrogate, a duplicate key, not JSON, the wrong
// content type or coding, gzip, the wrong method, an oversized path, query or header section, a
// junk path parameter, a doubled slash. A request is plain data (bytes and strings), so it can be
// printed, replayed, and sent in-process or over the network alike.
import { gzipSync } from "node:zlib";
import type { Contract, Operation, Parameter } from "./document.js";
import type { Random } from "./random.js";
import { INTERESTING_STRINGS, pooledId, randomText, validValue, type ValueContext } from "./values.js";

export interface FuzzRequest {
  readonly index: number;
  /** The operation the request was built from (a mutation may send it elsewhere). */
  readonly operationId: string;
  /** `valid`, or the mutation applied. */
  readonly mutation: string;
  readonly method: string;
  /** Path and query, percent-encoded as sent. */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Uint8Array;
}

interface Draft {
  method: string;
  path: Record<string, string>;
  query: [string, string][];
  headers: [string, string][];
  body?: Uint8Array;
}

const encoder = new TextEncoder();
const DEEP = "\u0000DEEP\u0000";

/** The key of the pool of `name` ids seen within one Session (a Turn of that Session, its terminals). */
export const sessionPool = (name: string, sessionId: string): string => `${name}@${sessionId}`;

function paramValue(parameter: Parameter, context: ValueContext, sessionId: string | undefined): string {
  const { random } = context;
  const name = parameter.name;
  if (name === "server") return random.chance(0.95) ? "local" : random.pick(["other", "LOCAL", randomText(random, 1, 12)]);
  // A Turn or terminal of the very Session the path names, most of the time: the pair is what exists.
  const within = sessionId === undefined || name === "sessionId" ? undefined : context.pools.get(sessionPool(name, sessionId));
  if (within && within.length > 0 && random.chance(0.75)) return random.pick(within);
  const pool = context.pools.get(name);
  if (pool && pool.length > 0 && random.chance(0.8)) return random.pick(pool);
  if (/Id$/.test(name) || parameter.schema["format"] === "uuid") return random.chance(0.95) ? random.uuid() : randomText(random, 1, 16);
  return randomText(random, 1, 16);
}

const QUERY_VALUES = ["0", "1", "2", "10", "50", "-1", "abc", "", "true", "false", "1.5", "99999999999999999999"];

function queryValue(parameter: Parameter, context: ValueContext): string {
  const { random } = context;
  const schema = context.contract.resolve(parameter.schema);
  if (Array.isArray(schema["enum"])) return String(random.pick(schema["enum"]));
  const type = schema["type"];
  if (type === "integer" || type === "number") return String(random.int(-1, 200));
  if (type === "boolean") return random.pick(["true", "false"]);
  if (/Id$/.test(parameter.name)) return pooledId(context, parameter.name);
  return random.pick(QUERY_VALUES);
}

function validDraft(operation: Operation, context: ValueContext, token: string | undefined): Draft {
  const { random } = context;
  const draft: Draft = { method: operation.method, path: {}, query: [], headers: token === undefined ? [] : [["authorization", `Bearer ${token}`]] };
  for (const parameter of operation.parameters) {
    if (parameter.in === "path") draft.path[parameter.name] = paramValue(parameter, context, draft.path["sessionId"]);
    else if (parameter.in === "query" && (parameter.required || random.chance(0.4))) draft.query.push([parameter.name, queryValue(parameter, context)]);
    else if (parameter.in === "header" && (parameter.required || random.chance(0.5))) {
      draft.headers.push([parameter.name, parameter.name === "x-ze-harness-client-id" ? `fuzz-${random.int(0, 3)}` : randomText(random, 1, 20)]);
    }
  }
  if (operation.body && (operation.body.required || random.chance(0.8))) {
    draft.body = encoder.encode(JSON.stringify(validValue(operation.body.schema, context, "body")));
    draft.headers.push(["content-type", "application/json"]);
  }
  return draft;
}

/** Every [container, key] inside a JSON value (objects and arrays), for a mutation to aim at. */
function locations(value: unknown): [Record<string | number, unknown>, string | number][] {
  const found: [Record<string | number, unknown>, string | number][] = [];
  const pending: unknown[] = [value];
  while (pending.length > 0 && found.length < 500) {
    const next = pending.pop();
    if (next === null || typeof next !== "object") continue;
    for (const [key, inner] of Object.entries(next)) {
      found.push([next as Record<string | number, unknown>, Array.isArray(next) ? Number(key) : key]);
      pending.push(inner);
    }
  }
  return found;
}

const objectsIn = (value: unknown): Record<string, unknown>[] => {
  const objects = locations(value)
    .map(([container, key]) => container[key])
    .filter((inner): inner is Record<string, unknown> => inner !== null && typeof inner === "object" && !Array.isArray(inner));
  return value !== null && typeof value === "object" && !Array.isArray(value) ? [value as Record<string, unknown>, ...objects] : objects;
};

const wrongTypeOf = (random: Random, value: unknown): unknown => {
  const options: unknown[] = [null, 0, -1, 1.5, true, "", "x", [], {}, [[[]]], { a: {} }, 1e308];
  return random.pick(options.filter((option) => typeof option !== typeof value || Array.isArray(option) !== Array.isArray(value)));
};

const nestedText = (random: Random, depth: number): string =>
  random.chance(0.5) ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Body mutations: they change the JSON value or its text. `undefined` when the draft has no JSON body. */
function mutateBody(draft: Draft, random: Random): string | undefined {
  if (draft.body === undefined) return undefined;
  const value: unknown = JSON.parse(new TextDecoder().decode(draft.body));
  const spots = locations(value);
  const setText = (text: string): void => {
    draft.body = encoder.encode(text);
  };
  const kind = random.weighted<string>([
    [3, "missing-field"],
    [3, "extra-field"],
    [3, "null-field"],
    [4, "wrong-type"],
    [1, "huge-string"],
    [2, "wide-array"],
    [2, "number-edge"],
    [3, "deep-nesting"],
    [2, "bad-utf8"],
    [2, "lone-surrogate"],
    [2, "duplicate-key"],
    [2, "not-json"],
    [1, "empty-body"],
    [1, "scalar-body"],
  ]);
  switch (kind) {
    case "missing-field": {
      const objects = objectsIn(value).filter((object) => Object.keys(object).length > 0);
      if (objects.length === 0) return undefined;
      const object = random.pick(objects);
      delete object[random.pick(Object.keys(object))];
      setText(JSON.stringify(value));
      return kind;
    }
    case "extra-field": {
      const objects = objectsIn(value);
      if (objects.length === 0) return undefined;
      random.pick(objects)[random.chance(0.5) ? randomText(random, 1, 10) : random.pick(["through", "id", "__proto__", "constructor", "type", "kind"])] = validOrJunk(random);
      setText(JSON.stringify(value));
      return kind;
    }
    case "null-field":
    case "wrong-type": {
      if (spots.length === 0) return undefined;
      const [container, key] = random.pick(spots);
      container[key] = kind === "null-field" ? null : wrongTypeOf(random, container[key]);
      setText(JSON.stringify(value));
      return kind;
    }
    case "wide-array": {
      // As many copies of an element as fit in the body bound: every multi-row statement a list
      // reaches (IN (…), one INSERT per row) must be chunked under SQLite's variable limit.
      const arrays = locations(value).filter(([container, key]) => Array.isArray(container[key]) && (container[key] as unknown[]).length > 0);
      if (arrays.length === 0) return undefined;
      const [container, key] = random.pick(arrays);
      const element = (container[key] as unknown[])[0];
      const size = Math.max(1, JSON.stringify(element).length + 1);
      const count = Math.min(200_000, Math.floor(random.pick([0.2, 0.9]) * (1024 * 1024)) / size);
      container[key] = Array.from({ length: Math.max(2, Math.floor(count)) }, () => element);
      setText(JSON.stringify(value));
      return `${kind}-${(container[key] as unknown[]).length}`;
    }
    case "number-edge": {
      // Numbers JSON.parse turns into Infinity, -0, a rounded integer or a denormal.
      const numbers = spots.filter(([container, key]) => typeof container[key] === "number");
      if (numbers.length === 0) return undefined;
      const [container, key] = random.pick(numbers);
      container[key] = DEEP;
      setText(JSON.stringify(value).replace(JSON.stringify(DEEP), random.pick(["1e999", "-1e999", "-0", "9007199254740993", "1.5", "0.1e-400", "-1", "2147483648", "1E2"])));
      return kind;
    }
    case "huge-string": {
      const size = random.pick([64 * 1024, 512 * 1024, 1024 * 1024 + 16]);
      const [container, key] = spots.length > 0 ? random.pick(spots) : [{} as Record<string, unknown>, "x"];
      container[key] = "x".repeat(size);
      setText(JSON.stringify(value));
      return kind;
    }
    case "deep-nesting": {
      const depth = random.pick([63, 64, 65, 1000, 100_000]);
      const [container, key] = spots.length > 0 ? random.pick(spots) : [{} as Record<string, unknown>, "x"];
      container[key] = DEEP;
      setText(JSON.stringify(value).replace(JSON.stringify(DEEP), nestedText(random, depth)));
      return `${kind}-${depth}`;
    }
    case "bad-utf8":
    case "lone-surrogate": {
      const strings = spots.filter(([container, key]) => typeof container[key] === "string");
      if (strings.length === 0) return undefined;
      const [container, key] = random.pick(strings);
      container[key] = `${String(container[key])}${DEEP}`;
      const text = JSON.stringify(value);
      if (kind === "lone-surrogate") {
        setText(text.replace(JSON.stringify(DEEP).slice(1, -1), random.pick(["\\ud800", "\\udc00x", "\\ud83d"])));
        return kind;
      }
      const [before, after] = text.split(JSON.stringify(DEEP).slice(1, -1)) as [string, string];
      const bad = random.pick([[0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]]);
      draft.body = new Uint8Array([...encoder.encode(before), ...bad, ...encoder.encode(after)]);
      return kind;
    }
    case "duplicate-key": {
      const text = JSON.stringify(value);
      const first = /^\{"((?:[^"\\]|\\.)*)":/.exec(text);
      if (!first) return undefined;
      setText(`{"${first[1]}":${JSON.stringify(validOrJunk(random))},${text.slice(1)}`);
      return kind;
    }
    case "not-json": {
      const text = JSON.stringify(value);
      setText(random.pick([text.slice(0, Math.max(0, text.length - 1)), `${text},`, "{", "nul", "\ufeff" + text, "{'a':1}", text.replace(/"/, "'")]));
      return kind;
    }
    case "empty-body":
      draft.body = new Uint8Array();
      return kind;
    default:
      setText(JSON.stringify(random.pick([[], "text", 1, true, null, [value]])));
      return kind;
  }
}

const validOrJunk = (random: Random): unknown => random.pick<unknown>([null, 1, "x", [], {}, [[[1]]], random.pick(INTERESTING_STRINGS)]);

const METHODS = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "PROPFIND"];

/** Mutations of the request line, headers and transfer, for any operation. */
function mutateRequest(draft: Draft, operation: Operation, random: Random): string {
  const params = Object.keys(draft.path);
  const kind = random.weighted<string>([
    [3, "wrong-method"],
    [2, "path-param"],
    [1, "long-path"],
    [1, "long-query"],
    [1, "big-headers"],
    [2, "query-junk"],
    [1, "double-slash"],
    [2, "missing-header"],
    [1, "bad-header-value"],
    [1, "foreign-host"],
    [2, "content-type"],
    [2, "gzip"],
    [1, "bad-coding"],
    [2, "head"],
    [1, "auth"],
    [1, "last-event-id"],
  ]);
  switch (kind) {
    case "wrong-method":
      draft.method = random.pick(METHODS.filter((method) => method !== operation.method));
      if (draft.method === "GET" || draft.method === "HEAD" || draft.method === "OPTIONS") delete draft.body;
      return `${kind}-${draft.method}`;
    case "path-param": {
      if (params.length === 0) return mutateRequest(draft, operation, random);
      const name = random.pick(params);
      draft.path[name] = random.pick([random.pick(INTERESTING_STRINGS), random.uuid(), random.uuid().toUpperCase(), "x".repeat(random.int(1, 300)), "%C3%28", "%", "a%2Fb", "..", "."]);
      return `${kind}-${name}`;
    }
    case "long-path": {
      if (params.length === 0) return mutateRequest(draft, operation, random);
      draft.path[random.pick(params)] = "p".repeat(random.pick([4000, 8200, 20_000]));
      return kind;
    }
    case "long-query":
      draft.query.push(["padding", "q".repeat(random.pick([4000, 8200, 20_000]))]);
      return kind;
    case "big-headers":
      draft.headers.push(["x-fuzz-padding", "h".repeat(random.pick([8000, 16_400, 40_000]))]);
      return kind;
    case "query-junk": {
      const names = [...operation.parameters.filter((p) => p.in === "query").map((p) => p.name), "unknown", "limit"];
      const name = random.pick(names);
      draft.query.push([name, random.pick([...QUERY_VALUES, random.pick(INTERESTING_STRINGS)])]);
      if (random.chance(0.3)) draft.query.push([name, "1"]);
      return kind;
    }
    case "double-slash":
      return kind;
    case "missing-header":
      draft.headers = draft.headers.filter(() => random.chance(0.3));
      return kind;
    case "bad-header-value":
      draft.headers.push(["x-ze-harness-client-id", random.pick(["", " ", "é\u00ff", "x".repeat(300), "a\tb"])]);
      return kind;
    case "last-event-id":
      // What a reconnecting EventSource sends back: the resume cursor of a stream, here junk.
      draft.headers.push(["last-event-id", random.pick(["0", "-1", "1.5", "abc", "99999999999999999999", "1e3", " 7", "", random.uuid(), "x".repeat(2000)])]);
      return kind;
    case "auth":
      draft.headers = draft.headers.filter(([name]) => name !== "authorization");
      if (random.chance(0.6)) draft.headers.push(["authorization", random.pick(["Bearer wrong", "Bearer ", "Basic dXNlcjpwYXNz", "bearer", `Bearer ${"t".repeat(5000)}`])]);
      return kind;
    case "foreign-host":
      draft.headers.push(random.chance(0.5) ? ["host", "evil.example"] : ["origin", random.pick(["http://evil.example", "null", "http://127.0.0.1:1"])]);
      return kind;
    case "content-type":
      draft.headers = draft.headers.filter(([name]) => name !== "content-type");
      if (random.chance(0.7)) draft.headers.push(["content-type", random.pick(["text/plain", "application/xml", "application/json; charset=utf-16", "application/x-www-form-urlencoded", "multipart/form-data", "application/vnd.api+json", ""])]);
      return kind;
    case "gzip":
      if (draft.body !== undefined) draft.body = new Uint8Array(gzipSync(draft.body));
      draft.headers.push(["content-encoding", random.pick(["gzip", "x-gzip"])]);
      return kind;
    case "bad-coding":
      draft.headers.push(["content-encoding", random.pick(["gzip", "deflate", "br", "compress", "gzip, gzip", "identity"])]);
      return kind;
    default:
      if (operation.method !== "GET") return mutateRequest(draft, operation, random);
      draft.method = "HEAD";
      return kind;
  }
}

/** encodeURIComponent for any string: a lone surrogate goes out as U+FFFD's bytes instead of throwing. */
function percentEncode(value: string): string {
  let out = "";
  for (const byte of encoder.encode(value)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.!~*'()]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function encodeTarget(operation: Operation, draft: Draft, doubleSlash: boolean): string {
  let path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = draft.path[name] ?? "";
    // Values a mutation wrote percent-encoded on purpose (`%C3%28`, `a%2Fb`) go out as they are.
    return /%[0-9A-Fa-f]{2}|^%$/.test(value) ? value : percentEncode(value);
  });
  if (doubleSlash) path = path.replace(/\//g, "//").replace(/\/\/$/, "/");
  const query = draft.query.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join("&");
  return query === "" ? path : `${path}?${query}`;
}

/** Request `index` of a run: an operation drawn at random, valid or mutated once. */
export function fuzzRequest(index: number, contract: Contract, context: ValueContext, token?: string): FuzzRequest {
  const { random } = context;
  // HEAD twins are reached through the `head` mutation of their GET.
  const operations = contract.operations.filter((operation) => operation.method !== "HEAD");
  const operation = random.pick(operations);
  const draft = validDraft(operation, context, token);
  let mutation = "valid";
  if (random.chance(0.6)) {
    const body = draft.body !== undefined && random.chance(0.55) ? mutateBody(draft, random) : undefined;
    mutation = body ?? mutateRequest(draft, operation, random);
  }
  return {
    index,
    operationId: operation.operationId,
    mutation,
    method: draft.method,
    target: encodeTarget(operation, draft, mutation === "double-slash"),
    headers: draft.headers,
    ...(draft.body !== undefined ? { body: draft.body } : {}),
  };
}
