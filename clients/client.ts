// The one client every surface uses: the generated SDK over network fetch or an
// in-process Fetch handler, with typed error unwrapping.
import { createClient, createConfig, type Client } from "../generated/client/client/index.js";
import { isLightRequest, LightRequest, toWebRequest } from "../services/contract/light-http.js";
import { observeServerVersion, type ServerVersionListener } from "./server-version.js";

export type FetchLike = (request: Request) => Promise<Response>;

export interface ZeClientOptions {
  /** e.g. http://127.0.0.1:4317; for an in-process handler any origin works. */
  readonly baseUrl: string;
  /** Bearer token for authenticated operations. */
  readonly token?: string | undefined;
  /** An in-process Fetch handler instead of the network. */
  readonly fetch?: FetchLike | undefined;
  /** Sent as `x-ze-harness-client-id` by callers that submit work. */
  readonly clientId?: string | undefined;
  /**
   * Observes the `Ze-Harness-Version` header (clients/server-version.ts): called with the first
   * valid value and each change, on ordinary responses and newly opened SSE streams. Advisory:
   * it never fails, retries or cancels a call.
   */
  readonly onServerVersion?: ServerVersionListener | undefined;
  /**
   * Check every response body against the contract's schemas (the generated zod validators; a
   * body that breaks it fails as InvalidResponse). Default true. False only for a server whose
   * bodies this build's own code wrote — the local daemon of this very release, proven by its
   * token (services/daemon/client.ts) — where the check would only cost start-up (zod is ≈ 60 ms
   * of a one-shot command): --remote servers and the SDK always validate.
   */
  readonly validateResponses?: boolean | undefined;
  /**
   * `fetch` reads requests structurally (the local daemon's does: services/daemon/client.ts), so
   * the CLI bundle's light requests (services/contract/light-http.ts) reach it as they are; any
   * other fetch gets undici's Request, rebuilt from them.
   */
  readonly lightRequests?: boolean | undefined;
}

export interface ZeClient {
  readonly client: Client;
  readonly baseUrl: string;
  readonly clientId: string;
}

export function createZeClient(options: ZeClientOptions): ZeClient {
  // Always a wrapper, even over the global fetch: in the CLI bundle the generated client makes
  // light requests (services/contract/light-http.ts), which only a wrapper turns into undici's.
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const handler = options.onServerVersion === undefined ? base : observeServerVersion(base, options.onServerVersion);
  const generated = createClient(
    createConfig({
      baseUrl: options.baseUrl,
      ...(options.token !== undefined ? { auth: options.token } : {}),
      fetch: (input: RequestInfo | URL, init?: RequestInit) => handler(options.lightRequests === true ? lightRequest(input, init) : webRequest(input, init)),
    }),
  );
  const client = options.validateResponses === false ? withoutResponseValidation(generated) : generated;
  return { client, baseUrl: options.baseUrl, clientId: options.clientId ?? `ze-harness-cli/${process.pid}` };
}

/** The generated client's request as it is when it is light (the CLI bundle), else undici's. */
const lightRequest = (input: RequestInfo | URL, init?: RequestInit): Request =>
  (isLightRequest(input) ? (init === undefined ? input : new LightRequest(input, init as ConstructorParameters<typeof LightRequest>[1])) : new Request(input, init)) as Request;

/** Undici's Request for a fetch that needs one (the embedded handler, the global fetch). */
const webRequest = (input: RequestInfo | URL, init?: RequestInit): Request =>
  isLightRequest(input) ? toWebRequest(init === undefined ? input : new LightRequest(input, init as ConstructorParameters<typeof LightRequest>[1])) : new Request(input, init);

const METHODS = ["connect", "delete", "get", "head", "options", "patch", "post", "put", "trace"] as const;

/**
 * `client` with the response validator the generated SDK functions pass dropped from every call
 * (plain and SSE): the SDK function builds `{ responseValidator, url, ...options }` and hands it
 * to one of these methods, so removing it here means the schemas are never imported.
 */
export function withoutResponseValidation(client: Client): Client {
  const strip = <O extends { responseValidator?: unknown }>(options: O): O => ({ ...options, responseValidator: undefined });
  const methods = Object.fromEntries(METHODS.map((method) => [method, (options: Parameters<Client["get"]>[0]) => client[method](strip(options))]));
  const sse = Object.fromEntries(METHODS.map((method) => [method, (options: Parameters<Client["sse"]["get"]>[0]) => client.sse[method](strip(options))]));
  return { ...client, ...methods, request: (options) => client.request(strip(options)), sse } as Client;
}

/** An error body as the contract encodes it. */
export interface EncodedErrorBody {
  readonly _tag: string;
  readonly message: string;
  readonly [key: string]: unknown;
}

/** A failed call: the HTTP status and the contract's encoded error. */
export class ZeClientError extends Error {
  constructor(
    readonly status: number,
    readonly body: EncodedErrorBody,
  ) {
    super(body.message);
    this.name = body._tag;
  }
}

const isEncodedError = (value: unknown): value is EncodedErrorBody =>
  typeof value === "object" && value !== null && typeof (value as { _tag?: unknown })._tag === "string" && typeof (value as { message?: unknown }).message === "string";

/** The encoded error of a refused response (read from a clone), or an UnexpectedResponse naming its status. */
export async function refusalBody(response: Response): Promise<EncodedErrorBody> {
  const text = await response.clone().text().catch(() => "");
  try {
    const body = JSON.parse(text) as EncodedErrorBody;
    if (typeof body?._tag === "string") return body;
  } catch {
    // not JSON: described below
  }
  return { _tag: "UnexpectedResponse", message: `Unexpected response (HTTP ${response.status})` };
}

/** Why a request got no response, naming the server: `cannot reach http://127.0.0.1:1: ECONNREFUSED`. */
export function transportFailure(error: unknown, url: string | undefined): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const reason =
    typeof cause?.code === "string" ? cause.code
    : typeof cause?.message === "string" && cause.message !== "" ? cause.message
    : error instanceof Error ? error.message
    : "the request failed before any response";
  let origin: string | undefined;
  try {
    origin = url === undefined ? undefined : new URL(url).origin;
  } catch {
    origin = undefined;
  }
  return origin === undefined ? reason : `cannot reach ${origin}: ${reason}`;
}

/** The data of a successful call, or a thrown ZeClientError (also for transport failures, as status 0). */
export async function unwrap<Data>(call: Promise<{ data?: Data; error?: unknown; response?: Response; request?: Request }>): Promise<Data> {
  let result: { data?: Data; error?: unknown; response?: Response; request?: Request };
  try {
    result = await call;
  } catch (error) {
    // The SDK's response validator rejects a body that breaks the contract.
    if (error instanceof Error && error.name === "ZodError") {
      throw new ZeClientError(0, { _tag: "InvalidResponse", message: `The server's response does not match the contract: ${summarizeZod(error)}` });
    }
    throw new ZeClientError(0, { _tag: "TransportError", message: error instanceof Error ? error.message : String(error) });
  }
  if (result.response === undefined) {
    // The generated client reports a failed fetch as an error without a response.
    throw new ZeClientError(0, { _tag: "TransportError", message: transportFailure(result.error, result.request?.url) });
  }
  if (result.error !== undefined || !result.response.ok) {
    const status = result.response.status;
    const body = isEncodedError(result.error)
      ? result.error
      : { _tag: "UnexpectedResponse", message: `Unexpected response${status ? ` (HTTP ${status})` : ""}: ${JSON.stringify(result.error ?? null)}` };
    throw new ZeClientError(status, body);
  }
  return result.data as Data;
}

function summarizeZod(error: Error): string {
  const issues = (error as Error & { issues?: { path: PropertyKey[]; message: string }[] }).issues ?? [];
  return issues.length === 0 ? error.message : issues.slice(0, 3).map((issue) => `${issue.path.map(String).join(".")}: ${issue.message}`).join("; ");
}
