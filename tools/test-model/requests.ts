// How the test model records a request: its headers, with credentials only as SHA-256 hashes
// (never the value), and its whole body.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Headers that carry a credential: recorded only as a SHA-256 hash, never the value. */
const CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key", "api-key"]);

/** `sha256:<hex>` of a credential value (what the recording holds in its place). */
export const credentialHash = (value: string): string => `sha256:${createHash("sha256").update(value, "utf8").digest("hex")}`;

export function headersOf(request: IncomingMessage): { headers: Record<string, string>; credentialSha256?: string } {
  const headers: Record<string, string> = {};
  let credentialSha256: string | undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(", ") : value;
    if (!CREDENTIAL_HEADERS.has(key)) {
      headers[key] = text;
      continue;
    }
    // `Bearer TOKEN` keeps its scheme: `Bearer sha256:…`; other credential headers hash whole.
    const scheme = key === "authorization" ? /^(\S+) (.+)$/.exec(text) : null;
    const secret = scheme ? scheme[2]! : text;
    headers[key] = scheme ? `${scheme[1]} ${credentialHash(secret)}` : credentialHash(secret);
    if (key !== "api-key" || credentialSha256 === undefined) credentialSha256 = credentialHash(secret);
  }
  return credentialSha256 !== undefined ? { headers, credentialSha256 } : { headers };
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
