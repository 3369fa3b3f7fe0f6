// The Node host's wire transport (transport.ts): node:http(s) with keep-alive agents, the answer
// read as the response's own Node stream. No web streams, no undici: a one-step Turn's model
// request costs about a third of the CPU it does through the global fetch.
//
// Like the fetch transport it follows no redirect, and it asks for no compression (no
// accept-encoding header: providers answer uncompressed). A connection that delivers nothing
// for IDLE_MS fails (undici's fetch has the same 300 s header and body timeouts); the
// attempt's own deadline, when the model has one, is the signal's.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { WireTransport } from "./transport.js";

const IDLE_MS = 300_000;
// An idle kept-alive connection is closed after 4 s (undici's default), or sooner when the
// provider's Keep-Alive header asks: a provider closing it first could reset the next request.
const KEEP_ALIVE_IDLE_MS = 4_000;
const httpAgent = new HttpAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });

export const nodeTransport: WireTransport = ({ url, headers, body, signal }) =>
  new Promise((resolvePromise, reject) => {
    const target = new URL(url);
    const secure = target.protocol === "https:";
    if (!secure && target.protocol !== "http:") {
      reject(new TypeError(`the provider URL's scheme ${target.protocol} is not http or https`));
      return;
    }
    const payload = Buffer.from(body, "utf8");
    const outgoing: Record<string, string> = {};
    headers.forEach((value, name) => {
      outgoing[name] = value;
    });
    outgoing["content-length"] = String(payload.byteLength);
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
    const request = (secure ? httpsRequest : httpRequest)(target, { method: "POST", headers: outgoing, agent: secure ? httpsAgent : httpAgent, signal }, onResponse);
    request.setTimeout(IDLE_MS, () => request.destroy(Object.assign(new Error(`the provider sent nothing for ${IDLE_MS / 1000} s`), { code: "ETIMEDOUT" })));
    // `on`, not `once`: an abort after the answer arrived is a second error (the promise is settled by then).
    request.on("error", reject);
    request.end(payload);
  });
