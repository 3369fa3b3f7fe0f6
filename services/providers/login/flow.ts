// What a login method is to the login manager: start it (one request to the authorization
// server that yields the code to show), then complete it (poll until the user approved, denied,
// or the code expired). Device codes and tokens stay inside the flow and the auth.json entry it
// returns; the manager exposes only the prompt and connection metadata.
import type { OAuthAuthEntry } from "../auth-file.js";
import type { LoginContext } from "./oauth.js";

export interface LoginPrompt {
  readonly verificationUrl: string;
  readonly userCode: string;
}

export type LoginOutcome =
  | { readonly ok: true; readonly entry: OAuthAuthEntry }
  | { readonly ok: false; readonly reason: "denied" | "expired" | "error"; readonly message: string };

export interface StartedLogin {
  readonly prompt: LoginPrompt;
  /** Epoch ms after which the code is no longer accepted (Infinity when the server gave none). */
  readonly expiresAt: number;
  /** Polls until an outcome; rejects with the signal's reason when cancelled. */
  complete(signal: AbortSignal): Promise<LoginOutcome>;
}

export interface LoginMethod {
  readonly id: string;
  readonly label: string;
  readonly notice?: { readonly text: string; readonly links: readonly { readonly label: string; readonly url: string }[] };
  /** Throws a LoginStepError (safe message) when the login cannot start. */
  start(context: LoginContext, signal: AbortSignal): Promise<StartedLogin>;
}

/** The OAuth 2.0 device-code poll rules (RFC 8628 §3.5), shared by every device-style flow. */
export const SLOW_DOWN_MS = 5_000;
export const DEFAULT_INTERVAL_MS = 5_000;
