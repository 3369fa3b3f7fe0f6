// Proof that a listener is the registered daemon, asked before the daemon token is ever sent:
// the client sends a fresh random nonce (`GET /_daemon/challenge?nonce=…`, no token) and the
// daemon answers an HMAC-SHA256 under the token of its registration id, its own URL and that
// nonce. Only a holder of the token can answer; the URL in the proof stops a listener on a freed
// port from relaying the challenge to the real daemon on another port and passing its answer on.
// Light on purpose: the client loads it on every local command.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const CHALLENGE_PATH = "/_daemon/challenge";
const NONCE = /^[A-Za-z0-9_-]{22,128}$/;

export interface ChallengeAnswer {
  readonly id: string;
  readonly proof: string;
}

export const newNonce = (): string => randomBytes(32).toString("base64url");
export const validNonce = (nonce: string | null): nonce is string => nonce !== null && NONCE.test(nonce);

export function challengeProof(token: string, claim: { readonly id: string; readonly url: string; readonly nonce: string }): string {
  return createHmac("sha256", token).update(`ze-harness-daemon-proof\n${claim.id}\n${claim.url}\n${claim.nonce}`).digest("base64url");
}

/** Whether `answer` proves the holder of `token` is the daemon registered as `id` at `url`. */
export function verifyProof(token: string, claim: { readonly id: string; readonly url: string; readonly nonce: string }, answer: unknown): boolean {
  const record = answer as Partial<ChallengeAnswer> | null;
  if (typeof record !== "object" || record === null || record.id !== claim.id || typeof record.proof !== "string") return false;
  const expected = Buffer.from(challengeProof(token, claim));
  const given = Buffer.from(record.proof);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
