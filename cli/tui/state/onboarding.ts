// Connect provider (Ctrl+X P, Ctrl+Alt+P, --onboarding): the server's providers with their
// availability; a device login (its URL and code shown until the login settles) or an API
// key typed into a masked field (never shown, never kept after the request). Through the
// generated client only: providers, startProviderLogin, getProviderLogin, connectProviderKey.
import { sdk, unwrap, type SafeProviderSummary } from "../../../clients/index.js";
import type { Controller, PickerSpec } from "./controller.js";

export function providerPicker(controller: Controller): PickerSpec {
  let providers: SafeProviderSummary[] = [];
  return {
    title: "Connect provider",
    hint: "↑/↓ move · Enter connect · Ctrl+R refresh · Esc close",
    load: async () => {
      providers = (await unwrap(sdk.providers({ client: controller.backend.api.client }))).providers;
      return providers.flatMap((provider) => {
        const state = provider.availability.status === "available" ? "connected" : provider.availability.reason.replace(/_/g, " ");
        const logins = provider.logins.map((login) => ({ id: `${provider.id}\u0000login\u0000${login.id}`, label: `${provider.displayName}: ${login.label}`, detail: state }));
        const key = provider.methods.includes("api_key") ? [{ id: `${provider.id}\u0000key`, label: `${provider.displayName}: API key`, detail: state }] : [];
        return [...logins, ...key];
      });
    },
    choose: async (item) => {
      const [providerId, kind, methodId] = item.id.split("\u0000") as [string, string, string | undefined];
      controller.closeOverlay();
      if (kind === "key") return controller.update({ overlay: { kind: "secret", providerId, text: "" } });
      await deviceLogin(controller, providerId, methodId);
    },
  };
}

async function deviceLogin(controller: Controller, providerId: string, methodId: string | undefined): Promise<void> {
  const client = controller.backend.api.client;
  let login = await unwrap(sdk.startProviderLogin({ client, path: { providerId }, body: methodId !== undefined ? { methodId } : {} }));
  while (login.status === "pending") {
    controller.info(`Open ${login.prompt.verificationUrl} and enter the code ${login.prompt.userCode}`);
    login = await unwrap(sdk.getProviderLogin({ client, path: { providerId, loginId: login.loginId }, query: { waitMs: "5000" } }));
  }
  if (login.status === "failed") throw new Error(`login failed: ${login.message}`);
  controller.catalog = undefined; // models are read again
  controller.info(`${providerId} connected`);
}

/** Enter in the masked API-key field. */
export async function connectKey(controller: Controller, providerId: string, apiKey: string): Promise<void> {
  if (apiKey === "") throw new Error("an API key is needed");
  await unwrap(sdk.connectProviderKey({ client: controller.backend.api.client, path: { providerId }, body: { apiKey } }));
  controller.catalog = undefined;
  controller.info(`${providerId} connected`);
}
