// The page's one connection to the host: the generated client (clients/client.ts) at the
// document-relative base (`v1/…` beside the page), with the tab's bearer token when one is in
// use. The token lives in sessionStorage, or in memory only where storage is unavailable (an
// opaque-origin frame). A 401 from any call is reported once to `onUnauthorized`.
import { createZeClient, unwrap, ZeClientError, type ZeClient } from "../client.js";

const STORAGE_KEY = "ze-harness:dashboard-token";

/** A server name the page can address: what the host put in its identity meta tag. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function storage(): Storage | undefined {
  try {
    const store = window.sessionStorage;
    store.getItem(STORAGE_KEY);
    return store;
  } catch {
    return undefined;
  }
}

export class Connection {
  readonly baseUrl: string;
  private memoryToken: string | undefined;
  private readonly store = storage();
  client: ZeClient;
  /** Called when a call is refused with 401 (the page then asks for a token). */
  onUnauthorized: (error: ZeClientError) => void = () => {};

  constructor(readonly server: string) {
    // `v1/servers/<server>/…` relative to the document: at /dashboard that is /v1/…, under a
    // prefix it stays under the prefix. The generated paths start with /v1, so the base is the
    // document's directory without its trailing slash.
    this.baseUrl = new URL(".", document.baseURI).href.replace(/\/$/, "");
    this.memoryToken = this.store?.getItem(STORAGE_KEY) ?? undefined;
    this.client = this.build();
  }

  get token(): string | undefined {
    return this.memoryToken;
  }

  setToken(token: string | undefined): void {
    this.memoryToken = token === "" ? undefined : token;
    try {
      if (this.memoryToken === undefined) this.store?.removeItem(STORAGE_KEY);
      else this.store?.setItem(STORAGE_KEY, this.memoryToken);
    } catch {
      // Storage refused the write: the token stays in memory only.
    }
    this.client = this.build();
  }

  private build(): ZeClient {
    return createZeClient({ baseUrl: this.baseUrl, token: this.memoryToken, clientId: "ze-harness-dashboard" });
  }

  /** The data of a call, or a thrown ZeClientError (a 401 also reaches `onUnauthorized`). */
  async call<T>(call: Promise<{ data?: T; error?: unknown; response?: Response; request?: Request }>): Promise<T> {
    try {
      return await unwrap(call);
    } catch (error) {
      if (error instanceof ZeClientError && error.status === 401) this.onUnauthorized(error);
      throw error;
    }
  }
}

export const isStatus = (error: unknown, ...statuses: number[]): boolean => error instanceof ZeClientError && statuses.includes(error.status);

export const messageOf = (error: unknown): string =>
  error instanceof ZeClientError ? `${error.body._tag}: ${error.body.message}` : error instanceof Error ? error.message : String(error);

/** A random UUID (v4). `crypto.randomUUID` exists only in secure contexts; a dashboard served over plain HTTP from another host is not one. */
export function newId(): string {
  if (typeof crypto.randomUUID === "function" && window.isSecureContext) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
