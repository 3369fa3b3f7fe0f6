// The `providers.<id>.definition` and `providers.<id>.options` shapes. The config schema leaves
// both free-form; this file checks them strictly (unknown fields fail closed, so a typo never
// silently does nothing) and reports the first problem as a JSON pointer under the entry.
import { z } from "zod";
import type { JsonValue } from "../config/types.js";
import { isValidModelId } from "./models-dev.js";
import type { Authentication, ModelProtocol } from "./protocol.js";

const protocol = z.enum(["chat", "responses", "messages"]);
/** Product-owned login modules this build carries (`codex`: the ChatGPT login of `openai`; `tap`: the TAP sign-in). */
export const LOGIN_MODULES = ["codex", "tap"] as const;
/** An HTTP header name (RFC 9110 token). */
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name");
/** A header value: printable, no CR/LF (no header injection). */
const headerValue = z.string().max(8192).regex(/^[\t\x20-\x7e\x80-\uffff]*$/, "must not contain control characters");
const headers = z.record(headerName, headerValue);
const environmentName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");
const reasoningEffort = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

const authentication = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("bearer") }),
  z.strictObject({ kind: z.literal("header"), name: headerName, prefix: z.string().max(64).optional() }),
  z.strictObject({ kind: z.literal("none") }),
]);

const capabilities = z.strictObject({
  input: z.array(z.enum(["text", "image"])).min(1).optional(),
  output: z.array(z.literal("text")).min(1).optional(),
  tools: z.boolean().optional(),
  reasoning: z.boolean().optional(),
  temperature: z.boolean().optional(),
  reasoningEfforts: z.array(reasoningEffort).min(1).optional(),
  image: z
    .strictObject({
      referenceTypes: z.array(z.enum(["url", "base64"])).min(1),
      mimeTypes: z.array(z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"])).min(1),
    })
    .optional(),
});

const limits = z.strictObject({
  contextUnits: z.number().int().min(0).optional(),
  outputUnits: z.number().int().min(0).optional(),
});

const modelDefinition = z.strictObject({
  upstreamId: z.string().min(1).max(512).optional(),
  displayName: z.string().min(1).max(256).optional(),
  protocol: protocol.optional(),
  baseURL: z.string().optional(),
  capabilities: capabilities.optional(),
  limits: limits.optional(),
});

const routes = z.strictObject({
  chat: z.string().optional(),
  responses: z.string().optional(),
  messages: z.string().optional(),
});

const loginNotice = z.strictObject({
  text: z.string().min(1).max(4096),
  links: z.array(z.strictObject({ label: z.string().min(1).max(256), url: z.string().url().max(2048) })).max(16),
});

/** `login`: a standard OAuth 2.0 device login (its descriptor's path or URL), or a product-owned login module. */
const login = z.union([
  z.strictObject({
    device: z.strictObject({
      /** A path resolved against the provider base URL, or an absolute http(s) URL. */
      discoveryURL: z.string().min(1).max(2048),
      notice: loginNotice.optional(),
    }),
  }),
  z.strictObject({ module: z.enum(LOGIN_MODULES) }),
]);

const definitionSchema = z.strictObject({
  displayName: z.string().min(1).max(256).optional(),
  baseURL: z.string().optional(),
  protocol: protocol.optional(),
  routes: routes.optional(),
  authentication: authentication.optional(),
  headers: headers.optional(),
  credentials: z.strictObject({ environment: z.array(environmentName) }).optional(),
  models: z
    .record(z.string().refine(isValidModelId, "must be 1–512 printable characters without spaces"), modelDefinition)
    .optional(),
  /** Discover models from `GET <baseURL>/models` (performed by the discovery step, not here). */
  discovery: z.boolean().optional(),
  /** How the provider signs in on the host (`provider login`). */
  login: login.optional(),
});

const optionsSchema = z.strictObject({
  baseURL: z.string().optional(),
  headers: headers.optional(),
  /** The request deadline in ms; `false` or `null` = unlimited. */
  timeout: z.union([z.number().int().min(1), z.literal(false), z.null()]).optional(),
  /** Same as `timeout` (the Worker host's spelling). */
  requestTimeoutMs: z.union([z.number().int().min(1), z.null()]).optional(),
  apiKey: z.string().min(1).optional(),
});

export type ModelCapabilitiesDefinition = z.infer<typeof capabilities>;
export type ModelDefinition = z.infer<typeof modelDefinition>;

/** A checked provider definition. */
export interface ProviderDefinition {
  readonly displayName?: string;
  readonly baseURL?: string;
  readonly protocol?: ModelProtocol;
  readonly routes?: Partial<Record<ModelProtocol, string>>;
  readonly authentication?: Authentication;
  readonly headers?: Readonly<Record<string, string>>;
  readonly credentials?: { readonly environment: readonly string[] };
  readonly models?: Readonly<Record<string, ModelDefinition>>;
  readonly discovery?: boolean;
  readonly login?: LoginDefinition;
}

export interface LoginNotice {
  readonly text: string;
  readonly links: readonly { readonly label: string; readonly url: string }[];
}

/** A checked `definition.login`. */
export type LoginDefinition =
  | { readonly device: { readonly discoveryURL: string; readonly notice?: LoginNotice } }
  | { readonly module: (typeof LOGIN_MODULES)[number] };

/** Checked provider options. `apiKey` is still plain here: the registry wraps it in a `Secret` at once. */
export interface ProviderOptions {
  readonly baseURL?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeout?: number | false | null;
  readonly requestTimeoutMs?: number | null;
  readonly apiKey?: string;
}

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly path: string; readonly message: string };

const pointer = (segments: readonly PropertyKey[]): string =>
  segments.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

function check<T>(schema: z.ZodType<T>, value: unknown): Checked<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  // Zod messages name the expectation, never the received value, so secrets cannot leak here.
  return { ok: false, path: pointer(issue?.path ?? []), message: issue?.message ?? "invalid value" };
}

export const checkDefinition = (value: unknown): Checked<ProviderDefinition> =>
  check(definitionSchema as z.ZodType<ProviderDefinition>, value);

export const checkOptions = (value: { readonly [key: string]: JsonValue } | undefined): Checked<ProviderOptions> =>
  check(optionsSchema as z.ZodType<ProviderOptions>, value ?? {});
