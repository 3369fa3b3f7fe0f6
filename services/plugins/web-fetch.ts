// `webFetch`, a plugin's bounded text fetching through the host's network (the `webfetch` tool's
// rules, with safe codes): the same on the Node host (capabilities.ts) and the Worker
// (worker/plugins.ts). An aborted signal rejects with the signal's reason, not a safe code.
import { WebFetchError, type WebFetch } from "../../plugin/index.js";
import { readBounded } from "../contract/body.js";
import { DEFAULT_WEB_FETCH_TIMEOUT_MS, MAX_WEB_FETCH_RESPONSE_BYTES, MAX_WEB_FETCH_TIMEOUT_MS } from "../tools/tool.js";
import { checkUrl, isTextualContentType } from "../tools/webfetch.js";

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new Error("The operation was aborted.");
}

const ACCEPT = {
  markdown: "text/markdown;q=1.0, text/plain;q=0.9, text/html;q=0.8, application/xhtml+xml;q=0.8, */*;q=0.1",
  text: "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, application/xhtml+xml;q=0.8, */*;q=0.1",
  html: "text/html;q=1.0, application/xhtml+xml;q=1.0, text/plain;q=0.9, text/markdown;q=0.8, */*;q=0.1",
} as const;
const BROWSER_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/** Bounded text fetching through this process's network (the `webfetch` tool's rules, with safe codes). */
export function createWebFetch(fetchImpl: typeof fetch = fetch): WebFetch {
  return {
    fetchText: async ({ url, format, timeoutMs = DEFAULT_WEB_FETCH_TIMEOUT_MS, signal }) => {
      let target: URL;
      try {
        target = checkUrl(url);
      } catch {
        throw new WebFetchError({ code: "invalid_url" });
      }
      if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_WEB_FETCH_TIMEOUT_MS) throw new WebFetchError({ code: "invalid_timeout" });
      checkSignal(signal);
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), timeoutMs);
      const combined = AbortSignal.any([signal, timeout.signal]);
      const fail = (error: unknown): never => {
        if (error instanceof WebFetchError) throw error;
        checkSignal(signal);
        throw new WebFetchError({ code: timeout.signal.aborted ? "timed_out" : "request_failed" });
      };
      try {
        const accept = ACCEPT[format] ?? ACCEPT.markdown;
        const request = (agent: string) => fetchImpl(target, { method: "GET", redirect: "follow", signal: combined, headers: { accept, "user-agent": agent } });
        let response = await request(BROWSER_USER_AGENT).catch(fail);
        if (response.status === 403 && response.headers.get("cf-mitigated") === "challenge") {
          await response.body?.cancel().catch(() => undefined);
          response = await request("ze-harness").catch(fail);
        }
        const reject = async (code: ConstructorParameters<typeof WebFetchError>[0]["code"]): Promise<never> => {
          await response.body?.cancel().catch(() => undefined);
          throw new WebFetchError({ code });
        };
        if (response.status < 200 || response.status > 299) return await reject("http_status");
        const contentType = response.headers.get("content-type");
        if (!isTextualContentType(contentType)) return await reject("unsupported_content_type");
        const declared = response.headers.get("content-length");
        if (declared !== null && Number(declared) > MAX_WEB_FETCH_RESPONSE_BYTES) return await reject("too_large");
        const body = await readBounded(response.body, MAX_WEB_FETCH_RESPONSE_BYTES).catch(fail);
        if (body === "too_large") throw new WebFetchError({ code: "too_large" });
        let content: string;
        try {
          content = new TextDecoder("utf-8", { fatal: true }).decode(body);
        } catch {
          throw new WebFetchError({ code: "invalid_utf8" });
        }
        return { content, contentType: contentType ?? "", byteLength: body.length };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

