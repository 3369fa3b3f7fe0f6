// One model request attempt on the wire, shared by every adapter:
//
// - the deadline (reference, "Provider request deadlines"): one timer bounds the whole attempt —
//   request setup, every body read, error-body reads — counted from the start; progress never
//   resets it. Expiry aborts the request and fails the attempt as `timeout`.
// - the wire bounds (reference, "Wire parser bounds"): a single SSE event and a single HTTP error
//   body are each capped at 1 MiB; overflow aborts the request and fails it as `too_large`
//   (sse-post.ts applies them).
// - the request itself (sse-post.ts): sent to the resolved endpoint with exactly the headers we
//   choose — the protocol's, the provider's static headers, and the authentication rule — so no
//   ambient environment (OPENAI_CUSTOM_HEADERS, organization headers, ANTHROPIC_* variables)
//   reaches a request. No adapter runs a provider SDK any more; their types only are used.
// - classification of whatever was thrown into a `ProviderFailure`. The message is only our
//   wording, the label and the status: a provider's error body never reaches it (see failure.ts).
import type { ModelRequest, ModelStreamEvent } from "./events.js";
import { ProviderFailure, isProviderFailure, kindOfCode, kindOfStatus, retryAfterOf, safeToken, type ProviderFailureKind } from "./failure.js";
import type { Authentication } from "./protocol.js";
import type { Secret } from "./secret.js";
import { stringChars } from "../contract/string-chars.js";

/** 1 MiB: the largest single SSE event or HTTP error body an attempt accepts. */
export const WIRE_LIMIT_BYTES = 1024 * 1024;

/**
 * 128 MiB: the most bytes one streamed response may carry, framing included. A response's
 * framing is most of its bytes (≈ 150–300 per one-token chunk: a 128k-token answer is ≈ 40 MiB),
 * so this leaves room for the longest real answer and bounds what an adapter accumulates (a tool
 * call's arguments) when a provider never stops.
 */
export const WIRE_RESPONSE_LIMIT_BYTES = 128 * 1024 * 1024;

/**
 * 8 Mi characters: the most content one model response may stream (text, reasoning and its
 * continuation data, refusals, tool calls' ids, names and arguments) — 16 times the longest answer
 * models give today (128k tokens ≈ 0.5 MiB). Every character is kept several times over (the
 * Turn's part, its message, its outcome, the history row and its search index, each live delta to
 * every watcher, and the next request's history), so a provider that never stops would otherwise
 * grow the host's memory and the database without bound.
 */
export const RESPONSE_CONTENT_LIMIT = 8 * 1024 * 1024;

/** 1,024: the most tool calls one model response may make (each is a part, rows and a run). */
export const RESPONSE_TOOL_CALL_LIMIT = 1024;

const chars = (value: unknown): number => (typeof value === "string" ? value.length : 0);

/**
 * One model response counted against RESPONSE_CONTENT_LIMIT and RESPONSE_TOOL_CALL_LIMIT, event
 * by event: `streamModel` keeps one per attempt, the host one per plugin-served response.
 */
export class ResponseBound {
  #content = 0;
  #toolCalls = 0;

  /** Why `event` takes the response past a bound, or undefined while it stays within them. */
  exceeded(event: ModelStreamEvent): string | undefined {
    switch (event.type) {
      case "text.delta":
      case "reasoning.delta":
      case "refusal.delta":
        this.#content += chars(event.text);
        break;
      case "reasoning.end":
        if (event.continuation !== undefined) this.#content += stringChars(event.continuation.data);
        break;
      case "tool_call":
        this.#content += chars(event.id) + chars(event.name) + chars(event.arguments);
        this.#toolCalls += 1;
        if (this.#toolCalls > RESPONSE_TOOL_CALL_LIMIT) return `the response makes more than ${RESPONSE_TOOL_CALL_LIMIT} tool calls`;
        break;
      default:
        return undefined;
    }
    return this.#content > RESPONSE_CONTENT_LIMIT ? `the response exceeds ${RESPONSE_CONTENT_LIMIT} characters of content` : undefined;
  }
}

export const USER_AGENT = "ze-harness";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** The reason an attempt's own signal aborts with when it ends: the default reason, made once (a DOMException per request costs its stack). */
const DISPOSED = new DOMException("This operation was aborted", "AbortError");

/** The state of one attempt: its abort signal, deadline, first recorded failure, and whether output has started. */
export class Attempt {
  readonly #controller = new AbortController();
  readonly #userSignal: AbortSignal;
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #secrets: string[];
  readonly label: string;
  /** Aborts on the caller's signal, the deadline, or a recorded failure. */
  readonly signal: AbortSignal;
  #failure: ProviderFailure | undefined;
  /** Set once the stream yielded content (text, reasoning, refusal or a tool call). */
  outputStarted = false;

  constructor(request: ModelRequest) {
    this.label = request.model.ref;
    this.#userSignal = request.signal;
    // The credential, plus static header values that look like credentials (a key put in `options.headers`).
    this.#secrets = [
      ...(request.credential !== undefined ? [request.credential.reveal()] : []),
      ...Object.entries(request.model.headers)
        .filter(([name]) => /auth|key|token|secret|cookie/i.test(name))
        // Both the whole value and the value without a scheme word ("Bearer sk-…" → "sk-…").
        .flatMap(([, value]) => [value, value.replace(/^[A-Za-z]+\s+/, "")])
        .filter((value) => value.length >= 8),
    ];
    // The caller's abort reaches the attempt's own controller through a listener removed at
    // dispose, not AbortSignal.any: in Node 20 that costs ≈ 25 µs per signal and keeps the
    // composite alive until it aborts.
    this.signal = this.#controller.signal;
    if (request.signal.aborted) this.#controller.abort(request.signal.reason);
    else request.signal.addEventListener("abort", this.#onCallerAbort, { once: true });
    const bounds = [request.timeoutMs, request.model.timeoutMs].filter((value): value is number => typeof value === "number" && value > 0);
    if (bounds.length > 0) {
      const ms = Math.min(...bounds);
      this.#timer = setTimeout(() => {
        this.record(
          new ProviderFailure({
            kind: "timeout",
            beforeOutput: !this.outputStarted,
            message: `${this.label}: the model request exceeded its ${ms} ms deadline`,
          }),
        );
      }, ms);
    }
  }

  /** Records the attempt's failure (the first one wins) and aborts the request. */
  record(failure: ProviderFailure): ProviderFailure {
    this.#failure ??= failure;
    this.#controller.abort(this.#failure);
    return this.#failure;
  }

  get failure(): ProviderFailure | undefined {
    return this.#failure;
  }

  /** A provider code or request ID, kept only when it is a short token free of any secret. */
  token(value: unknown): string | undefined {
    return safeToken(value, this.#secrets);
  }

  /** Ends the attempt: clears the deadline and aborts whatever is still open (always: see streamModel). */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#userSignal.removeEventListener("abort", this.#onCallerAbort);
    this.#controller.abort(DISPOSED);
  }

  readonly #onCallerAbort = (): void => this.#controller.abort(this.#userSignal.reason);

  fail(kind: ProviderFailureKind, message: string, extra: { status?: number; providerCode?: string; retryAfterMs?: number; requestId?: string } = {}): ProviderFailure {
    return new ProviderFailure({ kind, message: `${this.label}: ${message}`, beforeOutput: !this.outputStarted, ...extra });
  }

  /** Any thrown value → the attempt's `ProviderFailure`. */
  classify(error: unknown): ProviderFailure {
    const beforeOutput = !this.outputStarted;
    if (this.#failure !== undefined) return this.#failure.withBeforeOutput(this.#failure.beforeOutput && beforeOutput);
    if (this.#userSignal.aborted) return this.fail("aborted", "the model request was cancelled");
    if (isProviderFailure(error)) return error.withBeforeOutput(beforeOutput);
    if (error instanceof SyntaxError) return this.fail("server", "the provider sent malformed stream data");
    // undici reports a cut connection as TypeError("terminated") with the socket error as its cause.
    return this.fail("transport", `the connection failed${this.#causeCode(error)}`);
  }

  /** A request that got no answer (the connection failed before a response): what `cause` was. */
  unreachable(cause: unknown): ProviderFailure {
    if (isProviderFailure(cause)) return cause.withBeforeOutput(!this.outputStarted);
    return this.fail("transport", `could not reach the provider${this.#causeCode(cause)}`);
  }

  #causeCode(error: unknown): string {
    let current: unknown = error;
    for (let depth = 0; depth < 4 && isObject(current); depth += 1) {
      if (typeof current["code"] === "string" && /^[A-Z0-9_]+$/.test(current["code"])) return ` (${current["code"]})`;
      current = current["cause"];
    }
    return "";
  }

  /**
   * The failure of a provider's answer: an HTTP error status with its (parsed) body, or — with
   * no status — an error object the provider sent inside a stream: what the SDKs' APIError
   * carried, classified as the SDKs' errors were (sse-post.ts reads it).
   */
  statusFailure(status: number | undefined, body: unknown, headers: Headers | undefined): ProviderFailure {
    // OpenAI: { error: { message, type, code } } or the inner object; Anthropic: { type: "error", error: { type, message } }.
    const inner = isObject(body) && isObject(body["error"]) ? body["error"] : isObject(body) ? body : {};
    const codeValue = [inner["code"], inner["type"]].find((value) => typeof value === "string" && value !== "") as string | undefined;
    // The body's `message` is deliberately never read: it is provider text (see failure.ts).
    const providerCode = this.token(codeValue);
    const kind = status !== undefined ? kindOfStatus(status) : (kindOfCode(codeValue) ?? "server");
    const retryAfterMs = kind === "rate_limit" || kind === "server" ? retryAfterOf(headers) : undefined;
    const requestId = this.token(headers?.get("x-request-id") ?? headers?.get("request-id") ?? undefined);
    // No status: an error the provider sent inside a stream.
    const message = status !== undefined ? `${DESCRIPTIONS[kind]} (HTTP ${status})` : streamedDescription(kind);
    return this.fail(kind, message, {
      ...(status !== undefined ? { status } : {}),
      ...(providerCode !== undefined ? { providerCode } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
    });
  }
}

/** The fixed wording of a failure the provider reported inside a stream (no HTTP status). */
export const streamedDescription = (kind: ProviderFailureKind): string => `${DESCRIPTIONS[kind]} (reported in the stream)`;

const DESCRIPTIONS: Readonly<Record<ProviderFailureKind, string>> = {
  auth: "the provider rejected the credential",
  rate_limit: "the provider is rate limiting requests",
  bad_request: "the provider rejected the request",
  server: "the provider failed",
  transport: "the connection failed",
  timeout: "the provider timed out",
  aborted: "the model request was cancelled",
  too_large: "the request or response is too large",
};

/** Where and how to send: the resolved endpoint, static headers and authentication. */
export interface WireTarget {
  readonly endpoint: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly authentication: Authentication;
  readonly credential?: Secret;
}

/**
 * The byte count of the 1 MiB event bound (sse-post.ts): a function fed the stream's chunks in
 * order that answers false once the current event has passed `limit` bytes.
 */
export function sseEventCounter(limit: number): (chunk: Uint8Array) => boolean {
  let eventBytes = 0;
  let lineBytes = 0;
  let afterCR = false;
  return (chunk) => {
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index]!;
      if (byte === 10 && afterCR) {
        afterCR = false;
        continue;
      }
      afterCR = byte === 13;
      if (byte === 10 || byte === 13) {
        if (lineBytes === 0) eventBytes = 0;
        lineBytes = 0;
        continue;
      }
      lineBytes += 1;
      eventBytes += 1;
      if (eventBytes > limit) return false;
    }
    return true;
  };
}

/** Sets the authentication header in `headers` (lower-case names). */
export function authenticate(headers: Record<string, string>, authentication: Authentication, credential: Secret | undefined): void {
  if (authentication.kind === "none" || credential === undefined) return;
  if (authentication.kind === "bearer") headers["authorization"] = `Bearer ${credential.reveal()}`;
  else headers[authentication.name.toLowerCase()] = `${authentication.prefix ?? ""}${credential.reveal()}`;
}

