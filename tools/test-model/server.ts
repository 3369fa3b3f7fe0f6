// The HTTP side of the test model: routing, recording, the script queue, and writing a
// scripted response as a stream, a JSON body, an error, a hang or a cut connection.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { chatCompletion, chatStream, openaiErrorBody } from "./chat.js";
import { directiveTurn } from "./directives.js";
import { anthropicErrorBody, messagesJson, messagesStream } from "./messages.js";
import { responsesJson, responsesStream } from "./responses.js";
import { headersOf, readBody } from "./requests.js";
import {
  IdSource,
  isError,
  isHang,
  resolveTurn,
  scriptProblem,
  type Frame,
  type Protocol,
  type RecordedRequest,
  type RenderContext,
  type RenderOptions,
  type ResolvedTurn,
  type ScriptedResponse,
} from "./script.js";

export interface TestModelOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Chat Completions reasoning delta field. Default "reasoning_content". */
  chatReasoningField?: RenderOptions["chatReasoningField"];
  /** Responses reasoning as "summary" (reasoning_summary_text.*, default) or "content" (reasoning_text.*). */
  responsesReasoning?: RenderOptions["responsesReasoning"];
  /**
   * Answer from the prompt when the queue is empty and no reply() is set: `@call`, `@say`,
   * `@then`, `@next` lines in the last user message, else an echo (README "Prompt directives").
   * Default false: such a request gets the 500 "no scripted response".
   */
  directives?: boolean;
  /** Called as each model request is recorded (before it is answered). */
  onRequest?: (request: RecordedRequest, count: number) => void;
}

export interface TestModel {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  /** `url + "/v1"`: the `baseURL` for `new OpenAI(...)`. */
  readonly openaiBaseURL: string;
  /** `url` itself: the `baseURL` for `new Anthropic(...)` (it appends `/v1/messages`). */
  readonly anthropicBaseURL: string;
  /** Queue responses (FIFO, shared by all protocols). Throws on a malformed response. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Drops the queued responses no request took (a test that scripted more than it used); returns how many. */
  discard(): number;
  /** The fallback when the queue is empty. */
  reply(fn: (request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>): void;
  /** Every model request so far, in arrival order (a live view). */
  readonly requests: readonly RecordedRequest[];
  /** Resolves with the count-th request (1-based) as soon as it arrives. */
  waitForRequest(count: number): Promise<RecordedRequest>;
  /**
   * What `GET …/models` answers: the entries of an OpenAI model list (`{ object: "list", data }`,
   * each `{ id, owned_by?, context_length?, max_model_len?, … }`), or an HTTP error. Unset: 404.
   */
  setModelList(list: readonly Record<string, unknown>[] | { readonly status: number; readonly body?: unknown }): void;
  /** Every `GET …/models` so far (path and lower-cased headers), in arrival order. */
  readonly modelListRequests: readonly { readonly path: string; readonly headers: Readonly<Record<string, string>> }[];
  close(): Promise<void>;
}

interface Waiter {
  count: number;
  resolve: (request: RecordedRequest) => void;
  reject: (error: Error) => void;
}

/** Why a request has no answer: the message and error type of its 500. */
interface Unanswered {
  message: string;
  type: "test_model_unscripted" | "test_model_directive";
}

export { credentialHash } from "./requests.js";

function isUnanswered(value: ScriptedResponse | Unanswered): value is Unanswered {
  return "message" in value && "type" in value && !("events" in value);
}

const ROUTES: ReadonlyArray<readonly [RegExp, Protocol]> = [
  [/(^|\/)chat\/completions$/, "chat"],
  [/(^|\/)responses$/, "responses"],
  [/(^|\/)messages$/, "messages"],
];

const CONTROL_PREFIX = "/__test-model/";

function protocolOf(path: string): Protocol | null {
  for (const [pattern, protocol] of ROUTES) if (pattern.test(path)) return protocol;
  return null;
}

function errorBody(protocol: Protocol, message: string, type: string): unknown {
  return protocol === "messages" ? anthropicErrorBody(message, type) : openaiErrorBody(message, type);
}

function defaultErrorType(protocol: Protocol, status: number): string {
  if (protocol === "messages") {
    const types: Record<number, string> = {
      400: "invalid_request_error",
      401: "authentication_error",
      403: "permission_error",
      404: "not_found_error",
      413: "request_too_large",
      429: "rate_limit_error",
      529: "overloaded_error",
    };
    return types[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  }
  if (status === 429) return "rate_limit_exceeded";
  if (status === 401) return "invalid_request_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  response.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** Resolves after `ms`, or as soon as the client goes away. */
function pause(ms: number, response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      response.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    response.once("close", done);
  });
}

function drop(response: ServerResponse): void {
  response.socket?.destroy();
  response.destroy();
}

export async function startTestModel(options: TestModelOptions = {}): Promise<TestModel> {
  const host = options.host ?? "127.0.0.1";
  const renderOptions: RenderOptions = {
    chatReasoningField: options.chatReasoningField ?? "reasoning_content",
    responsesReasoning: options.responsesReasoning ?? "summary",
  };
  const ids = new IdSource();
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  let waiters: Waiter[] = [];
  let replyFn: ((request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>) | null = null;
  let closed = false;
  let modelList: readonly Record<string, unknown>[] | { readonly status: number; readonly body?: unknown } | undefined;
  const modelListRequests: { path: string; headers: Record<string, string> }[] = [];

  function serveModelList(path: string, request: IncomingMessage, response: ServerResponse): void {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers[name] = value;
    modelListRequests.push({ path, headers });
    if (modelList === undefined) return sendJson(response, 404, openaiErrorBody(`test-model: no model list is set (setModelList)`, "not_found"));
    if (!Array.isArray(modelList)) {
      const failure = modelList as { readonly status: number; readonly body?: unknown };
      return sendJson(response, failure.status, failure.body ?? openaiErrorBody(`test-model: scripted error ${failure.status}`, "test_model_error"));
    }
    sendJson(response, 200, { object: "list", data: modelList });
  }

  function enqueue(...responses: ScriptedResponse[]): void {
    for (const [index, response] of responses.entries()) {
      const problem = scriptProblem(response);
      if (problem) throw new TypeError(`test-model: enqueue() argument ${index + 1}: ${problem}`);
    }
    queue.push(...responses);
  }

  function record(request: RecordedRequest): number {
    requests.push(request);
    const count = requests.length;
    const ready = waiters.filter((waiter) => waiter.count === count);
    waiters = waiters.filter((waiter) => waiter.count !== count);
    for (const waiter of ready) waiter.resolve(request);
    options.onRequest?.(request, count);
    return count;
  }

  /** The answer to a request, or why there is none (`type`: the error type of the 500). */
  async function nextResponse(request: RecordedRequest, count: number): Promise<ScriptedResponse | Unanswered> {
    const queued = queue.shift();
    if (queued) return queued;
    if (!replyFn) {
      if (options.directives) {
        const turn = directiveTurn(request);
        return typeof turn === "string" ? { message: `${turn} (request #${count})`, type: "test_model_directive" } : turn;
      }
      return {
        message: `test-model: no scripted response for request #${count} (POST ${request.path}, ${request.protocol}): the queue is empty and no reply() is set`,
        type: "test_model_unscripted",
      };
    }
    let answer: ScriptedResponse;
    try {
      answer = await replyFn(request);
    } catch (error) {
      return { message: `test-model: reply() threw for request #${count}: ${error instanceof Error ? error.message : String(error)}`, type: "test_model_unscripted" };
    }
    const problem = scriptProblem(answer);
    return problem ? { message: `test-model: reply() returned a malformed response for request #${count}: ${problem}`, type: "test_model_unscripted" } : answer;
  }

  async function serveTurn(turn: ResolvedTurn, request: RecordedRequest, response: ServerResponse, headers: Record<string, string>): Promise<void> {
    const context: RenderContext = { request, ids, now: Date.now(), options: renderOptions };
    if (request.body?.stream === true) {
      if (turn.events[0]?.type === "drop") return drop(response);
      const frames: Generator<Frame> =
        request.protocol === "chat"
          ? chatStream(turn, context)
          : request.protocol === "responses"
            ? responsesStream(turn, context)
            : messagesStream(turn, context);
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        ...headers,
      });
      response.flushHeaders();
      // A drop waits until what was written has reached the socket, so the client gets it first.
      let written: Promise<void> = Promise.resolve();
      const gone = new Promise<void>((resolve) => response.once("close", () => resolve()));
      for (const frame of frames) {
        if (response.destroyed) return;
        if (frame.kind === "data") written = new Promise((resolve) => response.write(frame.data, () => resolve()));
        else if (frame.kind === "delay") await pause(frame.ms, response);
        else {
          await Promise.race([written, gone]);
          return drop(response);
        }
      }
      response.end();
      return;
    }
    for (const event of turn.events) {
      if (response.destroyed) return;
      if (event.type === "delay") await pause(event.ms, response);
      else if (event.type === "drop") return drop(response);
      else if (event.type === "error") return sendJson(response, 500, errorBody(request.protocol, event.message, event.code), headers);
    }
    if (response.destroyed) return;
    const body =
      request.protocol === "chat"
        ? chatCompletion(turn, context)
        : request.protocol === "responses"
          ? responsesJson(turn, context)
          : messagesJson(turn, context);
    sendJson(response, 200, body, headers);
  }

  async function handleModelRequest(protocol: Protocol, path: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    let body: unknown = text;
    let parsed = true;
    try {
      body = JSON.parse(text);
    } catch {
      parsed = false;
    }
    const recorded: RecordedRequest = { protocol, path, ...headersOf(request), body, receivedAt: Date.now() };
    const count = record(recorded);
    const requestId = `req_test_${String(count).padStart(6, "0")}`;
    // x-request-id is what openai reads, request-id what @anthropic-ai/sdk reads.
    const idHeaders = { "x-request-id": requestId, "request-id": requestId };
    if (!parsed) {
      sendJson(response, 400, errorBody(protocol, "test-model: the request body is not JSON", "invalid_request_error"), idHeaders);
      return;
    }
    const scripted = await nextResponse(recorded, count);
    if (isUnanswered(scripted)) {
      // Fail loudly and at once: no SDK retries of an unscripted request.
      sendJson(response, 500, errorBody(protocol, scripted.message, scripted.type), { ...idHeaders, "x-should-retry": "false" });
      return;
    }
    if (isError(scripted)) {
      const { status, body: errorText, headers } = scripted.error;
      const payload = errorText ?? errorBody(protocol, `test-model: scripted error ${status}`, defaultErrorType(protocol, status));
      sendJson(response, status, payload, { ...idHeaders, ...headers });
      return;
    }
    if (isHang(scripted)) {
      await new Promise<void>((resolve) => {
        if (response.destroyed) return resolve();
        response.once("close", () => resolve());
      });
      return;
    }
    await serveTurn(resolveTurn(scripted, recorded), recorded, response, idHeaders);
  }

  async function handleControl(path: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const name = path.slice(CONTROL_PREFIX.length);
    if (name === "requests" && request.method === "GET") return sendJson(response, 200, requests);
    if (name === "enqueue" && request.method === "POST") {
      try {
        const value: unknown = JSON.parse(await readBody(request));
        enqueue(...((Array.isArray(value) ? value : [value]) as ScriptedResponse[]));
        return sendJson(response, 200, { queued: queue.length });
      } catch (error) {
        return sendJson(response, 400, { error: { message: error instanceof Error ? error.message : String(error) } });
      }
    }
    sendJson(response, 404, { error: { message: `test-model: no control endpoint ${request.method} ${path}` } });
  }

  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const protocol = request.method === "POST" ? protocolOf(path) : null;
    const work = path.startsWith(CONTROL_PREFIX)
      ? handleControl(path, request, response)
      : request.method === "GET" && /(^|\/)models$/.test(path)
        ? Promise.resolve(serveModelList(path, request, response))
      : protocol
        ? handleModelRequest(protocol, path, request, response)
        : Promise.resolve(
            sendJson(response, 404, openaiErrorBody(`test-model: no route ${request.method} ${path} (serves POST …/chat/completions, …/responses, …/messages)`, "not_found")),
          );
    work.catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, openaiErrorBody(`test-model: internal error: ${error instanceof Error ? error.stack : String(error)}`, "test_model_internal"));
      } else {
        drop(response);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;

  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    enqueue,
    discard: () => queue.splice(0).length,
    reply(fn) {
      replyFn = fn;
    },
    get requests(): readonly RecordedRequest[] {
      return requests;
    },
    setModelList(list) {
      modelList = list;
    },
    get modelListRequests() {
      return modelListRequests;
    },
    waitForRequest(count: number): Promise<RecordedRequest> {
      if (!Number.isInteger(count) || count < 1) return Promise.reject(new RangeError("waitForRequest(count): count is 1-based"));
      const arrived = requests[count - 1];
      if (arrived) return Promise.resolve(arrived);
      if (closed) return Promise.reject(new Error("test-model: closed"));
      return new Promise((resolve, reject) => waiters.push({ count, resolve, reject }));
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const waiter of waiters) waiter.reject(new Error(`test-model: closed before request #${waiter.count} arrived`));
      waiters = [];
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await done;
    },
  };
}
