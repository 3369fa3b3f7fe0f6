// Model discovery: an authenticated `GET <baseURL>/models` for each provider whose `discovery`
// is on (a custom provider without a `models` map, or `definition.discovery: true`). The answer
// is the OpenAI list shape (`{ data: [{ id, owned_by?, context_length?, max_model_len? }] }`;
// a bare array is accepted too). Failures are values with a safe message (our wording and the
// HTTP status — never the provider's body), so a caller logs them and keeps the catalog and
// configured models: discovery is never fatal.
import { joinEndpoint } from "./base-url.js";
import { resolveCredential, type CredentialSources } from "./credentials.js";
import type { DiscoveredModel } from "./discovered.js";
import { isValidModelId, isValidProviderId } from "./models-dev.js";
import { defaultAuthentication } from "./protocol.js";
import { requiresCredential, type ResolvedProvider } from "./registry.js";
import { readBoundedText } from "../contract/body.js";
import { TAP_PROVIDER_ID } from "./tap.js";

/** The most a `/models` answer may be (a listing of thousands of models stays far below it). */
export const DISCOVERY_BODY_LIMIT = 4 * 1024 * 1024;
/** How long one discovery request may take unless the provider's own deadline is shorter. */
export const DISCOVERY_TIMEOUT_MS = 10_000;

export type DiscoveryResult =
  | { readonly ok: true; readonly models: readonly DiscoveredModel[] }
  | { readonly ok: false; readonly message: string };

export interface DiscoveryOptions {
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Does this provider list its models from `GET <baseURL>/models`? */
export const discovers = (provider: ResolvedProvider): boolean => provider.enabled && provider.discovery;

const positive = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;

/** The models of a `/models` answer (invalid entries are skipped; duplicate IDs keep the first). */
export function parseModelList(document: unknown): DiscoveredModel[] | undefined {
  const list = Array.isArray(document)
    ? document
    : typeof document === "object" && document !== null && Array.isArray((document as { data?: unknown }).data)
      ? ((document as { data: unknown[] }).data)
      : Array.isArray((document as { models?: unknown } | null)?.models)
        ? (document as { models: unknown[] }).models
        : undefined;
  if (list === undefined) return undefined;
  const seen = new Set<string>();
  const models: DiscoveredModel[] = [];
  for (const entry of list) {
    if (typeof entry !== "object" || entry === null) continue;
    const raw = entry as Record<string, unknown>;
    const id = raw["id"];
    if (!isValidModelId(id) || seen.has(id)) continue;
    seen.add(id);
    const owner = typeof raw["owned_by"] === "string" ? raw["owned_by"].toLowerCase() : undefined;
    const context = positive(raw["context_length"]) ?? positive(raw["max_model_len"]);
    const output = positive(raw["max_output_tokens"]) ?? positive(raw["max_completion_tokens"]);
    models.push({
      id,
      ...(owner !== undefined && isValidProviderId(owner) ? { ownedBy: owner } : {}),
      ...(context !== undefined ? { contextUnits: context } : {}),
      ...(output !== undefined ? { outputUnits: output } : {}),
    });
  }
  return models.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}


/** Lists one provider's models. Never throws. */
export async function discoverProviderModels(provider: ResolvedProvider, sources: CredentialSources, options: DiscoveryOptions = {}): Promise<DiscoveryResult> {
  const label = `${provider.id}: model discovery`;
  const credential = resolveCredential(provider, sources);
  // TAP's model listing is public: it is read before the sign-in too.
  const publicListing = (provider.base ?? provider.id) === TAP_PROVIDER_ID && !credential.ok && credential.reason !== "disabled";
  if (!credential.ok && !publicListing) return { ok: false, message: `${label} skipped: ${credential.message}` };
  const url = joinEndpoint(provider.baseURL, "models");
  const headers = new Headers({ accept: "application/json" });
  for (const [name, value] of Object.entries(provider.headers)) headers.set(name, value);
  const authentication = provider.authentication ?? defaultAuthentication(provider.protocol);
  if (provider.protocol === "messages" && !headers.has("anthropic-version")) headers.set("anthropic-version", "2023-06-01");
  if (requiresCredential(provider) && credential.ok && credential.secret !== undefined && authentication.kind !== "none") {
    const key = credential.secret.reveal();
    if (authentication.kind === "bearer") headers.set("authorization", `Bearer ${key}`);
    else headers.set(authentication.name, `${authentication.prefix ?? ""}${key}`);
  }
  const timeoutMs = Math.min(options.timeoutMs ?? DISCOVERY_TIMEOUT_MS, provider.timeoutMs ?? Number.POSITIVE_INFINITY);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const abort = (): void => controller.abort();
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    const response = await (options.fetch ?? globalThis.fetch)(url, { method: "GET", headers, signal: controller.signal, redirect: "error" });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, message: `${label} failed: the provider answered HTTP ${response.status}` };
    }
    const text = await readBoundedText(response, DISCOVERY_BODY_LIMIT);
    if (text === undefined) return { ok: false, message: `${label} failed: the answer is over ${DISCOVERY_BODY_LIMIT} bytes` };
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return { ok: false, message: `${label} failed: the answer is not JSON` };
    }
    const models = parseModelList(document);
    if (models === undefined) return { ok: false, message: `${label} failed: the answer is not a model list` };
    return { ok: true, models };
  } catch {
    return {
      ok: false,
      message: controller.signal.aborted ? `${label} failed: no answer within ${timeoutMs} ms` : `${label} failed: ${new URL(url).origin} cannot be reached`,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", abort);
  }
}
