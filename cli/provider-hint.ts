// The one actionable line a newcomer gets when `run` has no model to use because no provider is
// connected: how to connect one (`provider connect`, `provider login`, the environment variable).
import { listProviders, type SafeProviderSummary, type ZeClient } from "../clients/index.js";

/** Is this refusal "no usable model" (an unavailable model, or none configured)? */
function noUsableModel(error: unknown): boolean {
  const body = (error as { body?: { _tag?: unknown; reason?: unknown; message?: unknown } } | null)?.body;
  if (body?._tag === "UnavailableError" && body.reason === "model_unavailable") return true;
  return body?._tag === "ValidationError" && typeof body.message === "string" && body.message.includes("no model for this Turn");
}

function hintFor(providers: readonly SafeProviderSummary[]): string {
  const target = providers.find((provider) => provider.id === "openai") ?? providers.find((provider) => provider.logins.length > 0) ?? providers[0];
  const id = target?.id ?? "PROVIDER";
  const login = target !== undefined && target.logins.length > 0 ? ` or \`ze-harness provider login ${id}\` (sign in)` : "";
  const variable = id === "openai" ? "set OPENAI_API_KEY" : "set the provider's API key environment variable";
  return `no model provider is connected: run \`ze-harness provider connect ${id}\` (an API key)${login}, or ${variable}; then run again (\`ze-harness provider list\` shows every provider)`;
}

/**
 * When `error` refused a prompt for want of a model and no provider has a credential, the
 * newcomer's error (one line); otherwise `error` itself.
 */
export async function withProviderHint(client: ZeClient, error: unknown): Promise<unknown> {
  if (!noUsableModel(error)) return error;
  let providers: SafeProviderSummary[];
  try {
    providers = await listProviders(client);
  } catch {
    return error;
  }
  if (providers.some((provider) => provider.availability.status === "available")) return error;
  return new Error(hintFor(providers));
}
