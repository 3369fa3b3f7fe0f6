// A Fetch function over node:http for the loopback daemon. The global fetch() costs a Node 20
// process ≈ 60 ms and ≈ 40 MiB on first use (undici's dispatcher); node:http costs a fraction,
// and a local one-shot command makes only a couple of small requests. Streams (SSE) are passed
// through as they arrive; an aborted signal ends the request (and its body) with an AbortError;
// a request that gets no answer rejects like fetch (`TypeError: fetch failed` with the cause).
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as unknown;
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}

function bodyOf(response: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      response.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) response.pause();
      });
      response.once("end", () => controller.close());
      response.once("error", (error) => controller.error(signal.aborted ? abortError(signal) : error));
      response.once("aborted", () => controller.error(signal.aborted ? abortError(signal) : new TypeError("terminated")));
    },
    pull() {
      response.resume();
    },
    cancel() {
      response.destroy();
    },
  });
}

export async function httpFetch(input: Request): Promise<Response> {
  const url = new URL(input.url);
  const signal = input.signal;
  if (signal.aborted) throw abortError(signal);
  const body = input.body === null ? undefined : Buffer.from(await input.arrayBuffer());
  const headers: Record<string, string> = {};
  input.headers.forEach((value, key) => (headers[key] = value));
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  return new Promise<Response>((resolvePromise, reject) => {
    const outgoing = httpRequest({ agent, hostname: url.hostname.replace(/^\[|\]$/g, ""), port: url.port, path: `${url.pathname}${url.search}`, method: input.method, headers });
    const onAbort = (): void => void outgoing.destroy(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.once("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(signal.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }));
    });
    outgoing.once("response", (response) => {
      const responseHeaders = new Headers();
      for (const [key, value] of Object.entries(response.headers)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(key, item);
      }
      const status = response.statusCode ?? 502;
      const empty = input.method === "HEAD" || status === 204 || status === 304;
      if (empty) response.resume();
      response.once("close", () => signal.removeEventListener("abort", onAbort));
      resolvePromise(new Response(empty ? null : bodyOf(response, signal), { status, statusText: response.statusMessage ?? "", headers: responseHeaders }));
    });
    outgoing.end(body);
  });
}
