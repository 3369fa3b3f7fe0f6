// The fetched model catalog: `$XDG_CACHE_HOME/ze-harness/models.json` (default
// `~/.cache/ze-harness/models.json`), refreshed from `ZE_HARNESS_MODELS_URL` (default
// https://models.dev/api.json, a models.dev `api.json` document normalized by the same
// normalizer as the bundle) with conditional requests (`If-None-Match` → `304`).
//
// Precedence (reference, "Provider authority and configuration"): the cache is used only when
// its data was *published* at or after the bundled snapshot was built — the bundle is the floor,
// and when the cache was fetched does not count. The publish time is the response's
// `Last-Modified`; without one, a refresh that sees the content change records the previous check
// as a proven lower bound, a revalidation (`304`, or unchanged content) never makes data newer,
// and a first fetch proves nothing. Missing, invalid or foreign cache data is ignored (the bundle
// serves); a failed refresh keeps the previous cache. `ZE_HARNESS_DISABLE_MODELS_FETCH=1` turns
// background refreshes off (the cache stays usable).
import { createHash, randomUUID } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { homeDirectory, type Env } from "../config/paths.js";
import { bundledCatalog } from "./catalog.js";
import { normalizeModelsDev, type NormalizedCatalog } from "./models-dev.js";
import { readBoundedText } from "../contract/body.js";
import { makeDirectory } from "../contract/directory.js";

export const MODELS_URL_VARIABLE = "ZE_HARNESS_MODELS_URL";
export const DISABLE_MODELS_FETCH_VARIABLE = "ZE_HARNESS_DISABLE_MODELS_FETCH";
export const DEFAULT_MODELS_URL = "https://models.dev/api.json";
export const CATALOG_CACHE_FILE = "models.json";
/** The most a catalog document may be (models.dev's full `api.json` is a few MiB). */
export const CATALOG_BODY_LIMIT = 32 * 1024 * 1024;
export const CATALOG_FETCH_TIMEOUT_MS = 30_000;

/** `$XDG_CACHE_HOME/ze-harness` when `XDG_CACHE_HOME` is absolute, else `~/.cache/ze-harness`. */
export function cacheDirectory(env: Env): string {
  const xdg = env["XDG_CACHE_HOME"];
  return join(xdg !== undefined && xdg.startsWith("/") ? xdg : join(homeDirectory(env), ".cache"), "ze-harness");
}

export const catalogCacheFile = (env: Env): string => join(cacheDirectory(env), CATALOG_CACHE_FILE);

export const modelsUrl = (env: Env): string => {
  const value = env[MODELS_URL_VARIABLE];
  return value !== undefined && value.trim() !== "" ? value.trim() : DEFAULT_MODELS_URL;
};

/** Background refreshes are off (`ZE_HARNESS_DISABLE_MODELS_FETCH=1`). */
export const modelsFetchDisabled = (env: Env): boolean => env[DISABLE_MODELS_FETCH_VARIABLE] === "1";

// ---- The cache file ----

const modelRecord = z.object({
  id: z.string().min(1),
  displayName: z.string(),
  protocol: z.enum(["chat", "responses", "messages"]),
  baseURL: z.string().optional(),
  capabilities: z.object({
    input: z.array(z.enum(["text", "image"])).min(1),
    output: z.array(z.literal("text")).min(1),
    tools: z.boolean(),
    image: z.object({ referenceTypes: z.array(z.enum(["url", "base64"])).min(1), mimeTypes: z.array(z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"])).min(1) }).optional(),
    reasoningEfforts: z.array(z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"])).min(1).optional(),
  }),
  reasoning: z.boolean(),
  temperature: z.boolean(),
  limits: z.object({ contextUnits: z.number().int().min(0), outputUnits: z.number().int().min(0) }),
  pricing: z.union([
    z.object({
      version: z.literal("v1"),
      currency: z.string().max(3),
      unit: z.literal("million_model_units"),
      rates: z.object({ input: z.string(), output: z.string(), cacheReadInput: z.string().optional(), cacheWriteInput: z.string().optional() }),
    }),
    z.object({ version: z.literal("unknown") }),
  ]),
  status: z.enum(["alpha", "beta", "deprecated"]).optional(),
  releaseDate: z.string().optional(),
});

const providerRecord = z.object({
  id: z.string().min(1),
  displayName: z.string(),
  baseURL: z.string().min(1),
  protocol: z.enum(["chat", "responses", "messages"]),
  environment: z.array(z.string()),
  documentation: z.string().optional(),
  models: z.record(z.string(), modelRecord),
});

const cacheSchema = z.object({
  format: z.literal(1),
  url: z.string(),
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  /** ISO time the data is proven to have been published at (or after). */
  publishedAt: z.string().optional(),
  checkedAt: z.string(),
  contentHash: z.string(),
  catalog: z.object({ format: z.literal(1), source: z.string(), providers: z.record(z.string(), providerRecord) }),
});

export type CatalogCache = z.infer<typeof cacheSchema>;

/** The cache file when it is valid and was fetched from `url`; else undefined (never throws). */
export async function readCatalogCache(env: Env, url: string = modelsUrl(env)): Promise<CatalogCache | undefined> {
  let text: string;
  try {
    text = await readFile(catalogCacheFile(env), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = cacheSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.url === url ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function writeCatalogCache(env: Env, cache: CatalogCache): Promise<void> {
  const directory = cacheDirectory(env);
  await makeDirectory(directory, 0o700);
  const target = catalogCacheFile(env);
  const temporary = `${target}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(cache)}\n`, { mode: 0o600 });
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

const time = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const value = Date.parse(iso);
  return Number.isNaN(value) ? undefined : value;
};

/** Is the cached data proven to be at least as new as the bundle? */
export function cacheSupersedes(cache: CatalogCache, bundle: NormalizedCatalog = bundledCatalog()): boolean {
  const published = time(cache.publishedAt);
  if (published === undefined) return false;
  const built = time(bundle.builtAt);
  return built === undefined || published >= built;
}

export interface LoadedCatalog {
  readonly catalog: NormalizedCatalog;
  readonly origin: "bundled" | "cache";
}

/** The catalog a host starts (or reloads) with: the cache when it supersedes the bundle, else the bundle. */
export async function loadCatalog(env: Env): Promise<LoadedCatalog> {
  const bundle = bundledCatalog();
  const cache = await readCatalogCache(env);
  if (cache !== undefined && cacheSupersedes(cache, bundle)) return { catalog: cache.catalog as NormalizedCatalog, origin: "cache" };
  return { catalog: bundle, origin: "bundled" };
}

// ---- Refreshing ----

export interface CatalogRefresh {
  /** `updated`: new content was cached; `unchanged`: revalidated (304 or the same content); `failed`: the previous cache stays. */
  readonly status: "updated" | "unchanged" | "failed";
  /** Safe: our wording, the URL's origin and an HTTP status, never the document. */
  readonly message?: string;
  /** The cached catalog before and after the refresh (undefined: none). */
  readonly before: NormalizedCatalog | undefined;
  readonly after: NormalizedCatalog | undefined;
}

export interface CatalogRefreshOptions {
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

const contentHash = (catalog: NormalizedCatalog): string =>
  createHash("sha256").update(JSON.stringify(catalog.providers)).digest("hex");


/** One conditional refresh of the cache from `ZE_HARNESS_MODELS_URL`. Never throws. */
export async function refreshCatalogCache(env: Env, options: CatalogRefreshOptions = {}): Promise<CatalogRefresh> {
  const url = modelsUrl(env);
  const now = options.now ?? Date.now;
  const previous = await readCatalogCache(env, url);
  const before = previous?.catalog as NormalizedCatalog | undefined;
  let origin: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error();
    origin = parsed.origin;
  } catch {
    return { status: "failed", message: `${MODELS_URL_VARIABLE} is not an http(s) URL`, before, after: before };
  }
  const failed = (message: string): CatalogRefresh => ({ status: "failed", message: `catalog refresh from ${origin} failed: ${message}`, before, after: before });
  const headers = new Headers({ accept: "application/json" });
  if (previous?.etag !== undefined) headers.set("if-none-match", previous.etag);
  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? CATALOG_FETCH_TIMEOUT_MS;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const checkedAt = new Date(now()).toISOString();
  try {
    let response: Response;
    try {
      response = await (options.fetch ?? globalThis.fetch)(url, { headers, signal: controller.signal });
    } catch {
      return failed(controller.signal.aborted ? `no answer within ${timeoutMs} ms` : "the server cannot be reached");
    }
    if (response.status === 304 && previous !== undefined) {
      await response.body?.cancel().catch(() => undefined);
      // A revalidation never makes data newer: only the check time moves.
      await writeCatalogCache(env, { ...previous, checkedAt });
      return { status: "unchanged", before, after: before };
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return failed(`HTTP ${response.status}`);
    }
    let text: string | undefined;
    try {
      text = await readBoundedText(response, CATALOG_BODY_LIMIT);
    } catch {
      return failed(controller.signal.aborted ? `no answer within ${timeoutMs} ms` : "the document was cut off");
    }
    if (text === undefined) return failed(`the document is over ${CATALOG_BODY_LIMIT} bytes`);
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return failed("the document is not JSON");
    }
    const catalog = normalizeModelsDev(document, `${origin} (models.dev format)`);
    if (Object.keys(catalog.providers).length === 0) return failed("the document lists no usable provider");
    const hash = contentHash(catalog);
    const etag = response.headers.get("etag") ?? undefined;
    const lastModified = response.headers.get("last-modified") ?? undefined;
    const unchanged = previous !== undefined && previous.contentHash === hash;
    const headerTime = time(lastModified ?? undefined);
    const publishedAt =
      headerTime !== undefined ? new Date(headerTime).toISOString()
      : unchanged ? previous.publishedAt
      // Changed content proves it was published after the previous check; a first fetch proves nothing.
      : previous !== undefined ? previous.checkedAt
      : undefined;
    await writeCatalogCache(env, {
      format: 1,
      url,
      ...(etag !== undefined ? { etag } : {}),
      ...(lastModified !== undefined ? { lastModified } : {}),
      ...(publishedAt !== undefined ? { publishedAt } : {}),
      checkedAt,
      contentHash: hash,
      catalog: catalog as CatalogCache["catalog"],
    });
    return { status: unchanged ? "unchanged" : "updated", before, after: catalog };
  } catch {
    return failed("the cache could not be written");
  } finally {
    clearTimeout(timer);
  }
}
