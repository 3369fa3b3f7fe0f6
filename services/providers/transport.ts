// How a model request reaches its provider on the SDK-free path (sse-post.ts): one POST, its
// answer's status, headers and body chunks. The default sends with the global `fetch` (what every
// host has: workerd's native fetch, undici in Node); the Node host installs node-transport.ts,
// which sends with node:http(s) and reads the answer as a Node stream — in Node 20 undici's fetch
// and the web streams around it cost more CPU per model request than the rest of the request's
// handling (issue 21 §2).
//
// Never followed: a redirect answer is the caller's to refuse (`redirected` or a 3xx status).

/** One request: always a POST of a JSON text body. */
export interface WireSend {
  readonly url: string;
  /** Lower-case names (a plain record: undici's Headers cost more per request than the rest of its setup). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly signal: AbortSignal;
}

/** The provider's answer, its body not yet read. */
export interface WireAnswer {
  readonly status: number;
  /** Fetch's opaque redirect (a redirect whose status fetch hides). */
  readonly redirected: boolean;
  readonly headers: Headers;
  /** The body's chunks in order; iterated once. Ends early (throws) when the request is aborted. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops reading the body and lets go of the connection. */
  cancel(): void;
}

export type WireTransport = (send: WireSend) => Promise<WireAnswer>;

/** The global `fetch`, redirects never followed (`manual`: workerd accepts only `follow` and `manual`). */
export const fetchTransport: WireTransport = async ({ url, headers, body, signal }) => {
  const response = await fetch(url, { method: "POST", headers, body, signal, redirect: "manual" });
  const reader = response.body?.getReader();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (reader === undefined) return;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  return {
    status: response.status,
    redirected: response.type === "opaqueredirect",
    headers: response.headers,
    body: chunks(),
    cancel: () => void reader?.cancel().catch(() => undefined),
  };
};

let current: WireTransport = fetchTransport;

/** The transport SDK-free requests use from now on (the Node host: node-transport.ts). */
export function useWireTransport(transport: WireTransport): void {
  current = transport;
}

export const wireTransport = (): WireTransport => current;
