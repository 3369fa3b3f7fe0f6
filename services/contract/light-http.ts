// Headers, Request and Response without undici, for the CLI's warm-daemon path. In Node 20 the
// first touch of the global Headers, Request, Response or fetch loads undici (≈ 40 ms and ≈ 12 MiB
// of a one-shot command that makes three small loopback requests over node:http). The CLI bundle
// gives the generated client these classes instead of the globals (tools/bundle.mjs); the daemon
// transport (services/daemon/transport.ts) reads a request's plain fields and answers a
// LightResponse. Anywhere else a light request is rebuilt as the real thing (toWebRequest) and
// a light response likewise (toWebResponse), so the embedded host, --remote and the SDK see
// undici's classes as before. Only what the generated client, clients/ and the daemon client use
// is implemented; anything else (a FormData body or answer) falls back to undici.
//
// A response body from node:http stays a NodeBody (its chunks read as they come) until something
// asks for `response.body`: only then is it wrapped in a web ReadableStream. Node 20 loads its web
// streams (and worker/io, vm, …) on first touch of ReadableStream or TextDecoderStream, ≈ 8–12 ms of
// a warm-daemon command that reads a JSON answer (text/json) or an SSE stream (textReaderOf: the CLI
// bundle gives it to the generated client's SSE loop, tools/bundle.mjs) and never needs them.

type HeaderSource = { forEach(callback: (value: string, key: string) => void): void } | Iterable<readonly [string, string]> | Record<string, string | readonly string[] | undefined> | undefined | null;

/** The plain request the daemon transport sends. */
export interface HttpRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | null;
  readonly signal: AbortSignal;
}

/** What a light or a real Request offers the code that sends it. */
export interface RequestLike {
  readonly url: string;
  readonly method: string;
  readonly headers: { forEach(callback: (value: string, key: string) => void): void };
  readonly signal: AbortSignal;
  readonly body: unknown;
  arrayBuffer(): Promise<ArrayBuffer>;
}

const hasForEach = (value: unknown): value is { forEach(callback: (value: string, key: string) => void): void; get(name: string): string | null } =>
  typeof value === "object" && value !== null && typeof (value as { forEach?: unknown }).forEach === "function" && typeof (value as { get?: unknown }).get === "function";

export class LightHeaders {
  readonly #values = new Map<string, string[]>();

  /** Any Headers-shaped object counts (the generated client checks `instanceof Headers` before copying one). */
  static [Symbol.hasInstance](value: unknown): boolean {
    return hasForEach(value);
  }

  constructor(init?: HeaderSource) {
    if (init === undefined || init === null) return;
    if (hasForEach(init)) init.forEach((value, key) => this.append(key, value));
    else if (Symbol.iterator in init) for (const [key, value] of init as Iterable<readonly [string, string]>) this.append(key, value);
    else
      for (const [key, value] of Object.entries(init)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value as string]) this.append(key, item);
      }
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const list = this.#values.get(key);
    if (list) list.push(String(value).trim());
    else this.#values.set(key, [String(value).trim()]);
  }

  set(name: string, value: string): void {
    this.#values.set(name.toLowerCase(), [String(value).trim()]);
  }

  delete(name: string): void {
    this.#values.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase())?.join(", ") ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  /** In name order, as undici's Headers iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const key of [...this.#values.keys()].sort()) yield [key, this.get(key)!];
  }

  keys(): IterableIterator<string> {
    return [...this.entries()].map(([key]) => key)[Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return [...this.entries()].map(([, value]) => value)[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  forEach(callback: (value: string, key: string, headers: LightHeaders) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  /** Plain name → value pairs (node:http's shape). */
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.entries());
  }
}

interface LightRequestInit {
  readonly method?: string;
  readonly headers?: HeaderSource;
  readonly body?: unknown;
  readonly signal?: AbortSignal | null;
}

/** The bytes of a request body: the forms the generated client sends (a string above all); others via undici. */
export async function bodyBytes(body: unknown): Promise<Uint8Array | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  return new Uint8Array(await new Response(body as BodyInit).arrayBuffer());
}

export class LightRequest implements RequestLike {
  readonly url: string;
  readonly method: string;
  readonly headers: LightHeaders;
  readonly signal: AbortSignal;
  readonly body: unknown;

  constructor(input: string | URL | RequestLike, init: LightRequestInit = {}) {
    const source = typeof input === "object" && !(input instanceof URL) ? input : undefined;
    this.url = new URL(source ? source.url : String(input)).href;
    this.method = (init.method ?? source?.method ?? "GET").toUpperCase();
    this.headers = new LightHeaders(init.headers ?? source?.headers);
    this.body = init.body ?? source?.body ?? null;
    this.signal = init.signal ?? source?.signal ?? new AbortController().signal;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await bodyBytes(this.body);
    return bytes === null ? new ArrayBuffer(0) : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  }

  async text(): Promise<string> {
    return Buffer.from(await this.arrayBuffer()).toString("utf8");
  }
}

/** A body as node:http delivers it (services/daemon/transport.ts), readable without web streams. */
export interface NodeBody {
  /** Every chunk to the end; throws what the web stream would have errored with. */
  chunks(): AsyncIterator<Uint8Array>;
  /** The same body as a web stream (loads Node's web streams); called at most once, before chunks(). */
  toWeb(): ReadableStream<Uint8Array>;
  /** Drops the rest unread (the connection is closed). */
  cancel(): void;
}

// Not `instanceof ReadableStream`: touching that global loads Node's web streams.
const isNodeBody = (value: unknown): value is NodeBody => typeof (value as { toWeb?: unknown } | null)?.toWeb === "function";

/** What the SSE loop reads: decoded text chunks, as `body.pipeThrough(new TextDecoderStream()).getReader()` gives. */
export interface TextReader {
  read(): Promise<{ done: false; value: string } | { done: true; value?: undefined }>;
  cancel(): Promise<void>;
  releaseLock(): void;
}

/** A NodeBody's chunks as text; cancel() ends a pending read as done, as a web stream reader's does. */
function nodeTextReader(body: NodeBody): TextReader {
  const chunks = body.chunks();
  const decoder = new TextDecoder();
  let cancelled = false;
  let ended = false;
  return {
    async read() {
      if (cancelled || ended) return { done: true };
      let next: IteratorResult<Uint8Array>;
      try {
        next = await chunks.next();
      } catch (error) {
        if (cancelled) return { done: true };
        throw error;
      }
      if (cancelled) return { done: true };
      if (next.done) {
        ended = true;
        const tail = decoder.decode();
        return tail === "" ? { done: true } : { done: false, value: tail };
      }
      return { done: false, value: decoder.decode(next.value, { stream: true }) };
    },
    async cancel() {
      cancelled = true;
      body.cancel();
    },
    releaseLock() {},
  };
}

/**
 * The decoded text of an SSE response's body: a LightResponse's read straight from node:http, any
 * other's through TextDecoderStream. Throws as the generated SSE loop does when there is no body.
 */
export function textReaderOf(response: { readonly body: ReadableStream<Uint8Array> | null }): TextReader {
  const light = response instanceof LightResponse ? response.nodeBody() : undefined;
  if (light !== undefined) return nodeTextReader(light);
  if (!response.body) throw new Error("No body in SSE response");
  return (response.body as ReadableStream<BufferSource>).pipeThrough(new TextDecoderStream()).getReader() as TextReader;
}

export interface LightResponseInit {
  readonly status: number;
  readonly statusText?: string;
  readonly headers?: HeaderSource;
}

export class LightResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: LightHeaders;
  readonly url = "";
  readonly redirected = false;
  readonly type = "basic";
  #body: ReadableStream<Uint8Array> | NodeBody | null;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | NodeBody | null, init: LightResponseInit) {
    this.#body = body;
    this.status = init.status;
    this.statusText = init.statusText ?? "";
    this.headers = new LightHeaders(init.headers);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (isNodeBody(this.#body)) this.#body = this.#body.toWeb();
    return this.#body;
  }

  /** The body still as node:http gives it, now taken (the response is used): undefined once `body` was read. */
  nodeBody(): NodeBody | undefined {
    if (!isNodeBody(this.#body) || this.#used) return undefined;
    this.#used = true;
    return this.#body;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (this.#body === null) return new ArrayBuffer(0);
    const chunks: Uint8Array[] = [];
    if (isNodeBody(this.#body)) {
      const source = this.#body.chunks();
      for (let next = await source.next(); !next.done; next = await source.next()) chunks.push(next.value);
    } else for await (const chunk of this.#body) chunks.push(chunk);
    const all = Buffer.concat(chunks);
    return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return Buffer.from(await this.arrayBuffer()).toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get("content-type") ?? "" });
  }

  formData(): Promise<FormData> {
    return toWebResponse(this).formData();
  }

  clone(): LightResponse {
    if (this.#used) throw new TypeError("Response.clone: Body has already been consumed.");
    let copy: ReadableStream<Uint8Array> | null = null;
    const body = this.body;
    if (body !== null) [this.#body, copy] = body.tee();
    return new LightResponse(copy, { status: this.status, statusText: this.statusText, headers: this.headers });
  }
}

export const isLightRequest = (value: unknown): value is LightRequest => value instanceof LightRequest;

/** A request as node:http sends it: its headers as a plain record and its body as bytes. */
export async function toHttpRequest(request: RequestLike): Promise<HttpRequest> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => (headers[key] = value));
  const body = request instanceof LightRequest ? await bodyBytes(request.body) : request.body === null ? null : new Uint8Array(await request.arrayBuffer());
  return { url: request.url, method: request.method, headers, body, signal: request.signal };
}

/** A light request as undici's (for the embedded handler and global fetch); a real one as it is. */
export function toWebRequest(request: RequestLike): Request {
  if (!(request instanceof LightRequest)) return request as Request;
  const body = request.body as BodyInit | null;
  return new Request(request.url, { method: request.method, headers: [...request.headers], body, signal: request.signal, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit);
}

/** A light response as undici's. */
export function toWebResponse(response: LightResponse): Response {
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: [...response.headers] });
}
