// `webfetch`: one bounded HTTP(S) GET, returned as UTF-8 text exactly as received.
//
// As the reference's `webFetch.fetchText`: only absolute `http:`/`https:` URLs without embedded
// credentials; `format` only sets the `Accept` preference (markdown → text/markdown first, text
// → text/plain first, html → text/html first) and the body is never converted; redirects are
// followed; a final non-2xx status fails (`http_status`); only textual content types are accepted
// (`text/*`, JSON, XML, JavaScript, or none); a declared or actual body over
// MAX_WEB_FETCH_RESPONSE_BYTES fails (`too_large`) without reading further; the timeout
// (default DEFAULT_WEB_FETCH_TIMEOUT_MS, at most MAX_WEB_FETCH_TIMEOUT_MS) covers the whole
// exchange, body included. A Cloudflare challenge (403 + `cf-mitigated: challenge`) is retried
// once with a plain User-Agent.
//
// Permissions: `webfetch` on the normalized URL (`URL.href` without the fragment), saving `<origin>/*`.
import {
  DEFAULT_WEB_FETCH_TIMEOUT_MS,
  MAX_WEB_FETCH_RESPONSE_BYTES,
  MAX_WEB_FETCH_TIMEOUT_MS,
  ToolFailure,
  interrupted,
  textResult,
  throwIfAborted,
  type ToolDefinition,
} from "./tool.js";
import { readBounded as readStreamBounded } from "../contract/body.js";

export type WebFetchFormat = "markdown" | "text" | "html";

export interface WebFetchInput {
  readonly url: string;
  readonly format?: WebFetchFormat;
  readonly timeoutMs?: number;
}

const ACCEPT: Record<WebFetchFormat, string> = {
  markdown: "text/markdown;q=1.0, text/plain;q=0.9, text/html;q=0.8, application/xhtml+xml;q=0.8, */*;q=0.1",
  text: "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, application/xhtml+xml;q=0.8, */*;q=0.1",
  html: "text/html;q=1.0, application/xhtml+xml;q=1.0, text/plain;q=0.9, text/markdown;q=0.8, */*;q=0.1",
};

const BROWSER_USER_AGENT =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
const PLAIN_USER_AGENT = "ze-harness";

/** Parses and checks a URL; the failure is `invalid_url`. */
export function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolFailure("invalid_url", "The URL is not a valid absolute URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ToolFailure("invalid_url", "Only http and https URLs can be fetched.");
  if (url.hostname === "") throw new ToolFailure("invalid_url", "The URL has no host.");
  if (url.username !== "" || url.password !== "") throw new ToolFailure("invalid_url", "The URL must not embed credentials.");
  return url;
}

/** Whether a Content-Type header names text the tool returns. */
export function isTextualContentType(header: string | null): boolean {
  if (header === null || header.trim() === "") return true;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return (
    type.startsWith("text/") ||
    type === "application/json" ||
    type.endsWith("+json") ||
    type === "application/xml" ||
    type.endsWith("+xml") ||
    type === "application/javascript" ||
    type === "application/x-javascript"
  );
}

async function readBounded(response: Response): Promise<Uint8Array> {
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_WEB_FETCH_RESPONSE_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new ToolFailure("too_large", `The response is larger than ${MAX_WEB_FETCH_RESPONSE_BYTES} bytes.`);
  }
  const body = await readStreamBounded(response.body, MAX_WEB_FETCH_RESPONSE_BYTES);
  if (body === "too_large") throw new ToolFailure("too_large", `The response is larger than ${MAX_WEB_FETCH_RESPONSE_BYTES} bytes.`);
  return body;
}

export const webfetchTool: ToolDefinition<WebFetchInput> = {
  id: "webfetch",
  description:
    "Fetch an http(s) URL with GET and return the body as text (up to 5 MiB; textual content types only). " +
    "format sets the preferred response type (default markdown); the body is returned as received.",
  inputSchema: {
    type: "object",
    properties: {
      url: { type: "string", minLength: 1, description: "Absolute http or https URL." },
      format: { enum: ["markdown", "text", "html"], description: "Preferred response format." },
      timeoutMs: { type: "integer", minimum: 1, maximum: MAX_WEB_FETCH_TIMEOUT_MS, description: "Time limit in milliseconds." },
    },
    required: ["url"],
    additionalProperties: false,
  },
  permissions(input) {
    const url = checkUrl(input.url);
    url.hash = ""; // never sent; not part of what is authorized
    return [{ action: "webfetch", resources: [url.href], save: [`${url.origin}/*`] }];
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    const url = checkUrl(input.url);
    const timeoutMs = input.timeoutMs ?? DEFAULT_WEB_FETCH_TIMEOUT_MS;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout.signal]);
    const fail = (error: unknown): never => {
      if (error instanceof ToolFailure) throw error;
      if (ctx.signal.aborted) throw interrupted();
      if (timeout.signal.aborted) throw new ToolFailure("timed_out", `The request did not finish within ${timeoutMs} ms.`);
      throw new ToolFailure("request_failed", "The request failed.");
    };
    try {
      const request = (userAgent: string) =>
        fetch(url, { method: "GET", redirect: "follow", signal, headers: { accept: ACCEPT[input.format ?? "markdown"], "user-agent": userAgent } });
      let response = await request(BROWSER_USER_AGENT).catch(fail);
      if (response.status === 403 && response.headers.get("cf-mitigated") === "challenge") {
        await response.body?.cancel().catch(() => undefined);
        response = await request(PLAIN_USER_AGENT).catch(fail);
      }
      if (response.status < 200 || response.status > 299) {
        await response.body?.cancel().catch(() => undefined);
        throw new ToolFailure("http_status", `The server answered HTTP ${response.status}.`);
      }
      const contentType = response.headers.get("content-type");
      if (!isTextualContentType(contentType)) {
        await response.body?.cancel().catch(() => undefined);
        throw new ToolFailure("unsupported_content_type", `The response is not text (${contentType?.split(";")[0]?.trim() ?? ""}).`);
      }
      const body = await readBounded(response).catch(fail);
      try {
        return textResult(new TextDecoder("utf-8", { fatal: true }).decode(body));
      } catch {
        throw new ToolFailure("invalid_utf8", "The response is not UTF-8 text.");
      }
    } finally {
      clearTimeout(timer);
    }
  },
};
