// A tiny typed caller of the daemon's control router over fetch (@trpc/client is not installed):
// tRPC's non-batched HTTP shape — a query is `GET /_daemon/<path>?input=<json>`, a mutation
// `POST /_daemon/<path>` with the JSON input as its body, the answer `{ result: { data } }` or
// `{ error: { message, data: { code, httpStatus } } }`. Its types come from the router
// (type-only import: nothing of @trpc/server loads in the client).
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { HttpRequest } from "../contract/light-http.js";
import type { DaemonRouter } from "./router.js";

/** What a control call reads of an answer (the daemon transport's light response, or fetch's). */
interface ControlResponse {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
}

type Inputs = inferRouterInputs<DaemonRouter>;
type Outputs = inferRouterOutputs<DaemonRouter>;
type Procedures = DaemonRouter["_def"]["record"];
type PathsOf<Kind extends string> = { [K in keyof Procedures & string]: Procedures[K] extends { _def: { type: Kind } } ? K : never }[keyof Procedures & string];
export type ControlQuery = PathsOf<"query">;
export type ControlMutation = PathsOf<"mutation">;

/** A control call that failed: its HTTP status (0: no answer) and tRPC code or contract tag. */
export class ControlError extends Error {
  override name = "ControlError";
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface ControlClient {
  query<K extends ControlQuery>(path: K, ...input: undefined extends Inputs[K] ? [Inputs[K]?] : [Inputs[K]]): Promise<Outputs[K]>;
  mutate<K extends ControlMutation>(path: K, ...input: undefined extends Inputs[K] ? [Inputs[K]?] : [Inputs[K]]): Promise<Outputs[K]>;
}

export function controlClient(
  baseUrl: string,
  token: string,
  options: { readonly timeoutMs?: number; readonly fetch?: (request: HttpRequest) => Promise<ControlResponse> } = {},
): ControlClient {
  const send = options.fetch ?? ((request: HttpRequest) => fetch(request.url, { method: request.method, headers: request.headers, body: request.body as BodyInit | null, signal: request.signal }));
  const call = async (method: "GET" | "POST", path: string, input: unknown): Promise<any> => {
    let url = `${baseUrl}/_daemon/${path}`;
    if (method === "GET" && input !== undefined) url += `?input=${encodeURIComponent(JSON.stringify(input))}`;
    let response: ControlResponse;
    try {
      response = await send({
        url,
        method,
        headers: { authorization: `Bearer ${token}`, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
        body: method === "POST" ? Buffer.from(input === undefined ? "" : JSON.stringify(input)) : null,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error instanceof Error ? error.message : String(error));
      throw new ControlError(`cannot reach the daemon at ${baseUrl}: ${cause}`, 0, "TransportError");
    }
    const text = await response.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ControlError(`the daemon at ${baseUrl} answered ${response.status} without JSON`, response.status, "UnexpectedResponse");
    }
    if (response.ok && body?.result !== undefined) return body.result.data;
    const code = body?.error?.data?.code ?? body?._tag ?? "UnexpectedResponse";
    throw new ControlError(body?.error?.message ?? body?.message ?? `the daemon answered ${response.status}`, response.status, code);
  };
  return {
    query: (path, ...input) => call("GET", path, input[0]),
    mutate: (path, ...input) => call("POST", path, input[0]),
  };
}
