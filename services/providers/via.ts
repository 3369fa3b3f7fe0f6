// `via` routing at compile time (see tap.ts for the runtime side): a provider whose key a holder
// stores gets the holder as `holder`, and each of its models an endpoint on the holder's gateway.
import { providerInvalid, type ProviderResult } from "./errors.js";
import type { ResolvedProvider } from "./registry.js";
import { KEY_HOLDERS, viaEndpoint, type ViaRoute } from "./tap.js";

/**
 * `via`: a provider whose key a holder (`tap`) stores. Its models' requests go to the holder's
 * gateway (`<holder origin>/v1/via/<id>/<route>`) with the holder's credential as a bearer token.
 */
export function routeVia(compiled: readonly ResolvedProvider[]): ProviderResult<ResolvedProvider[]> {
  const byId = new Map(compiled.map((provider) => [provider.id, provider]));
  const out: ResolvedProvider[] = [];
  for (const provider of compiled) {
    const via = provider.via;
    if (via === undefined) {
      out.push(provider);
      continue;
    }
    const holder = byId.get(via);
    if (via === provider.id) return { ok: false, error: providerInvalid(provider.id, "/via", "a provider cannot hold its own key") };
    if (holder === undefined) {
      return { ok: false, error: providerInvalid(provider.id, "/via", `"${via}" is not a configured provider: add it to providers (for TAP: "tap": true)`) };
    }
    if (!KEY_HOLDERS.includes(holder.base ?? holder.id)) {
      return { ok: false, error: providerInvalid(provider.id, "/via", `"${via}" cannot hold provider keys (only ${KEY_HOLDERS.join(", ")} can)`) };
    }
    if (holder.via !== undefined) return { ok: false, error: providerInvalid(provider.id, "/via", `"${via}" is itself routed via "${holder.via}"; via cannot chain`) };
    const route: ViaRoute = { providerId: holder.id, displayName: holder.displayName };
    out.push({
      ...provider,
      holder,
      discovery: false,
      models: provider.models.map((model) => ({
        ...model,
        endpoint: viaEndpoint(holder.baseURL, provider.id, provider.routes[model.protocol]),
        authentication: { kind: "bearer" },
        via: route,
      })),
    });
  }
  return { ok: true, value: out };
}
