// TAP: the built-in `tap` preset (TAP credits and free models, served by the TAP Gateway), its
// sign-in, and `via` routing (a provider whose key is stored in TAP).
//
// - The preset: protocol chat, base URL `ZE_HARNESS_TAP_BASE_URL` (default
//   https://gateway.theaiplatform.app/v1/credits), which wins over a catalog `tap` section's URL
//   (the section still supplies limits and prices); it always discovers `GET <base>/models`.
// - The sign-in (`login: { module: "tap" }`, method `tap`): the OAuth 2.0 device flow whose
//   authorization-server metadata is `<issuer>/.well-known/oauth-authorization-server`, the issuer
//   being `ZE_HARNESS_TAP_ISSUER` (default: the gateway's origin). Before the code it shows the
//   notice the TAP app shows (`TAP_NOTICE`).
// - `via: "tap"` on another provider: its requests go to the TAP Gateway at the origin of the
//   tap base URL, `<origin>/v1/via/<providerId>/<route>`, with the TAP sign-in as the bearer
//   token; the gateway adds the key stored in TAP. Failures name TAP (`viaFailure`).
import type { Env } from "../config/paths.js";
import { joinEndpoint, validateBaseURL } from "./base-url.js";
import { ProviderFailure } from "./failure.js";
import type { ProviderEntry } from "../config/types.js";
import { providerInvalid, type ProviderResult } from "./errors.js";
import type { CatalogProviderRecord, NormalizedCatalog } from "./models-dev.js";

export const TAP_PROVIDER_ID = "tap";
export const TAP_DISPLAY_NAME = "TAP";
export const TAP_BASE_URL_VARIABLE = "ZE_HARNESS_TAP_BASE_URL";
export const TAP_ISSUER_VARIABLE = "ZE_HARNESS_TAP_ISSUER";
export const DEFAULT_TAP_BASE_URL = "https://gateway.theaiplatform.app/v1/credits";
export const TAP_METHOD_ID = "tap";
export const TAP_METHOD_LABEL = "TAP account";
/** Where the TAP issuer publishes its device-login metadata (RFC 8414). */
export const TAP_DISCOVERY_PATH = "/.well-known/oauth-authorization-server";
/** The providers that can hold another provider's key (`via`). */
export const KEY_HOLDERS: readonly string[] = [TAP_PROVIDER_ID];

/** The notice the TAP app shows before the code (reference: "login shows the notice the TAP app shows"). */
export const TAP_NOTICE = Object.freeze({
  text: "By continuing, you acknowledge Zephyr Cloud's Terms of Service and Privacy Policy, and agree to receive occasional product emails and notifications.",
  links: Object.freeze([
    Object.freeze({ label: "Terms of Service", url: "https://zephyr-cloud.io/terms" }),
    Object.freeze({ label: "Privacy Policy", url: "https://zephyr-cloud.io/privacy" }),
  ]),
});

export type TapUrl = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly message: string };

/** The tap base URL of this host: `ZE_HARNESS_TAP_BASE_URL`, else the default. */
export function tapBaseURL(env: Env | undefined): TapUrl {
  const value = env?.[TAP_BASE_URL_VARIABLE];
  if (value === undefined || value === "") return { ok: true, url: DEFAULT_TAP_BASE_URL };
  const checked = validateBaseURL(value);
  return checked.ok ? checked : { ok: false, message: `${TAP_BASE_URL_VARIABLE}: ${checked.message}` };
}

/** The TAP issuer: `ZE_HARNESS_TAP_ISSUER`, else the origin of the tap base URL. */
export function tapIssuer(env: Env | undefined, baseURL: string): string {
  const value = env?.[TAP_ISSUER_VARIABLE];
  return value !== undefined && value !== "" ? value.replace(/\/+$/, "") : new URL(baseURL).origin;
}

/** The `tap` preset as a catalog provider: the catalog's `tap` section (if any) under the preset's transport. */
export function tapPreset(catalog: NormalizedCatalog, baseURL: string): CatalogProviderRecord {
  const section = Object.hasOwn(catalog.providers, TAP_PROVIDER_ID) ? catalog.providers[TAP_PROVIDER_ID] : undefined;
  return { id: TAP_PROVIDER_ID, displayName: TAP_DISPLAY_NAME, protocol: "chat", environment: [], models: section?.models ?? {}, baseURL };
}

/** The catalog with the tap preset in it, when an entry is `tap` or has `base: "tap"`. */
export function withTapPreset(catalog: NormalizedCatalog, entries: Readonly<Record<string, ProviderEntry>>, env: Env | undefined): ProviderResult<NormalizedCatalog> {
  const used = Object.entries(entries).some(([id, entry]) => id === TAP_PROVIDER_ID || (typeof entry === "object" && entry.base === TAP_PROVIDER_ID));
  if (!used) return { ok: true, value: catalog };
  const url = tapBaseURL(env);
  if (!url.ok) return { ok: false, error: providerInvalid(TAP_PROVIDER_ID, "", url.message) };
  return { ok: true, value: { ...catalog, providers: { ...catalog.providers, [TAP_PROVIDER_ID]: tapPreset(catalog, url.url) } } };
}

/** The gateway endpoint of a provider routed `via` a key holder whose base URL is `holderBaseURL`. */
export function viaEndpoint(holderBaseURL: string, providerId: string, route: string): string {
  return joinEndpoint(`${new URL(holderBaseURL).origin}/v1/via/${providerId}`, route);
}

/** Which provider a model's requests are routed through, and how to name it. */
export interface ViaRoute {
  readonly providerId: string;
  readonly displayName: string;
}

/** A gateway answer that means "no key for this provider is stored in TAP". */
export const KEY_MISSING_CODE = "provider_key_missing";

/**
 * A failure of a request routed through a key holder, reworded to name it: the stored key is
 * missing, the sign-in was rejected, or anything else the gateway answered. Still our wording only.
 */
export function viaFailure(failure: ProviderFailure, model: { readonly ref: string; readonly providerId: string; readonly via?: ViaRoute }): ProviderFailure {
  const via = model.via;
  if (via === undefined) return failure;
  const status = failure.status !== undefined ? ` (HTTP ${failure.status})` : "";
  let message: string;
  if (failure.providerCode === KEY_MISSING_CODE) {
    message = `No ${model.providerId} key is stored in ${via.displayName}: add it in ${via.displayName} (or the ${via.displayName} Gateway dashboard)${status}.`;
  } else if (failure.kind === "auth" && failure.status !== undefined) {
    message = `${model.ref}: ${via.displayName} rejected the sign-in${status}: run \`ze-harness provider login ${via.providerId}\` again.`;
  } else {
    message = failure.message.startsWith(`${model.ref}:`)
      ? `${model.ref} (through ${via.displayName}):${failure.message.slice(model.ref.length + 1)}`
      : `${failure.message} (through ${via.displayName})`;
  }
  return new ProviderFailure({ ...failure.toJSON(), message });
}
