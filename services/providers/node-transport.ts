// The Node host's wire transport (transport.ts): node:http(s) with keep-alive agents, the answer
// read as the response's own Node stream. No web streams, no undici: a one-step Turn's model
// request costs about a third of the CPU it does through the global fetch.
//
// Like the fetch transport it follows no redirect, and it asks for no compression (no
// accept-encoding header: providers answer uncompressed). A connection that delivers nothing
// for IDLE_MS fails (undici's fetch has the same 300 s header and body timeouts); the
// attempt's own deadline, when the model has one, is the signal's.
//
// Per request it does only what node:http must (issue 21 §2): an endpoint's URL is parsed once
// (`routeOf`), the headers go to ClientRequest as a flat array (it then stores them in one pass,
// still validating every name and value, instead of a setHeader per header), the body is written
// as a string with the head, and the abort signal is one listener rather than `options.signal`
// (whose stream plumbing, addAbortSignal and a finished() watcher, cost more than the rest of
// the request's setup); an abort still destroys the request with an AbortError as that did.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { urlToHttpOptions } from "node:url";
import type { WireTransport } from "./transport.js";

const IDLE_MS = 300_000;
// An idle kept-alive connection is closed after 4 s (undici's default), or sooner when the
// provider's Keep-Alive header asks: a provider closing it first could reset the next request.
const KEEP_ALIVE_IDLE_MS = 4_000;
const httpAgent = new HttpAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });

/** Where one endpoint's requests go: what ClientRequest would derive from its URL each time. */
interface Route {
  readonly secure: boolean;
  readonly options: Readonly<Pick<RequestOptions, "protocol" | "hostname" | "port" | "path">>;
  /** The Host header node:http would send (brackets around an IPv6 address, a non-default port). */
  readonly host: string;
  /** `user:password` in the URL: node:http's Basic authorization when no `authorization` header is sent. */
  readonly basic: string | undefined;
}

const routes = new Map<string, Route>();
const ROUTES_KEPT = 64;

function routeOf(url: string): Route {
  const known = routes.get(url);
  if (known !== undefined) return known;
  const target = new URL(url);
  const secure = target.protocol === "https:";
  if (!secure && target.protocol !== "http:") throw new TypeError(`the provider URL's scheme ${target.protocol} is not http or https`);
  const parsed = urlToHttpOptions(target);
  const hostname = parsed.hostname ?? "localhost";
  const port = parsed.port === undefined || parsed.port === "" ? undefined : Number(parsed.port);
  const hostHeader = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
  const route: Route = {
    secure,
    options: { protocol: target.protocol, hostname, ...(port !== undefined ? { port } : {}), path: parsed.path ?? "/" },
    host: port !== undefined && port !== (secure ? 443 : 80) ? `${hostHeader}:${port}` : hostHeader,
    basic: typeof parsed.auth === "string" && parsed.auth !== "" ? Buffer.from(parsed.auth).toString("base64") : undefined,
  };
  if (routes.size >= ROUTES_KEPT) routes.clear();
  routes.set(url, route);
  return route;
}

/** What `options.signal` destroyed an aborted request with. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error("The operation was aborted", { cause: signal.reason }), { name: "AbortError", code: "ABORT_ERR" });
}

export const nodeTransport: WireTransport = ({ url, headers, body, signal }) =>
  new Promise((resolvePromise, reject) => {
    if (signal.aborted) {
      reject(abortError(signal));
      return;
    }
    let route: Route;
    try {
      route = routeOf(url);
    } catch (error) {
      reject(error);
      return;
    }
    const flat: string[] = ["host", route.host];
    for (const name in headers) flat.push(name, headers[name]!);
    if (route.basic !== undefined && headers["authorization"] === undefined) flat.push("authorization", `Basic ${route.basic}`);
    flat.push("content-length", String(Buffer.byteLength(body, "utf8")));
    const onResponse = (response: IncomingMessage): void => {
      // The answer's headers as a Headers object only when asked for (a failure's retry-after and
      // request ID): a streamed success never reads them, and undici's Headers cost per entry.
      let answerHeaders: Headers | undefined;
      const headersOf = (): Headers => {
        if (answerHeaders !== undefined) return answerHeaders;
        answerHeaders = new Headers();
        const raw = response.rawHeaders;
        for (let index = 0; index + 1 < raw.length; index += 2) answerHeaders.append(raw[index]!, raw[index + 1]!);
        return answerHeaders;
      };
      // Errors reach whoever iterates the body; one after the reading stopped must not go unhandled.
      response.on("error", () => undefined);
      resolvePromise({
        status: response.statusCode ?? 0,
        redirected: false,
        get headers() {
          return headersOf();
        },
        body: response,
        cancel: () => response.destroy(),
      });
    };
    const options: RequestOptions = { ...route.options, method: "POST", headers: flat as unknown as RequestOptions["headers"], agent: route.secure ? httpsAgent : httpAgent, timeout: IDLE_MS };
    let request: ReturnType<typeof httpRequest>;
    try {
      request = (route.secure ? httpsRequest : httpRequest)(options, onResponse);
    } catch (error) {
      // An invalid header name or value (node:http validates each).
      reject(error);
      return;
    }
    request.on("timeout", () => request.destroy(Object.assign(new Error(`the provider sent nothing for ${IDLE_MS / 1000} s`), { code: "ETIMEDOUT" })));
    // `on`, not `once`: an abort after the answer arrived is a second error (the promise is settled by then).
    request.on("error", reject);
    const onAbort = (): void => void request.destroy(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    request.once("close", () => signal.removeEventListener("abort", onAbort));
    request.end(body, "utf8");
  });
