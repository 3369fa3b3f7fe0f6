// The advisory `Ze-Harness-Version: <protocol>/<release>` header every Ze Harness response
// carries (e.g. `2/0.6.0`). A client observes it on the responses it gets anyway — no handshake
// request, no body read — and calls `onServerVersion` for the first valid value and each change,
// on ordinary responses and newly opened SSE streams alike. Missing or malformed headers are
// ignored; a throwing callback never fails, retries or cancels the call: it is for notices,
// not enforcement.

import { HARNESS_PROTOCOL_VERSION } from "../services/contract/protocol.js";

export const SERVER_VERSION_HEADER = "Ze-Harness-Version";

/** The protocol this client speaks (what a host of this build advertises). */
export const CLIENT_PROTOCOL_VERSION = HARNESS_PROTOCOL_VERSION;

export interface ServerVersion {
  /** The protocol half, e.g. 2. */
  readonly protocolVersion: number;
  /** The release half, e.g. `0.6.0`. */
  readonly harnessVersion: string;
}

const HEADER_VALUE = /^([1-9]\d{0,8})\/([0-9A-Za-z][0-9A-Za-z.+-]{0,63})$/;

/** The header's value as a ServerVersion, or undefined when it is missing or malformed. */
export function parseServerVersionHeader(value: string | null | undefined): ServerVersion | undefined {
  const match = value === null || value === undefined ? null : HEADER_VALUE.exec(value.trim());
  if (match === null) return undefined;
  return { protocolVersion: Number(match[1]), harnessVersion: match[2]! };
}

export type ServerVersionListener = (version: ServerVersion) => void;

/**
 * A fetch that reports the server version of every response it returns (first value and each
 * change) and otherwise answers exactly as `fetch` does.
 */
export function observeServerVersion<F extends (request: Request) => Promise<Response>>(fetch: F, onServerVersion: ServerVersionListener): (request: Request) => Promise<Response> {
  let last: string | undefined;
  return async (request) => {
    const response = await fetch(request);
    const version = parseServerVersionHeader(response.headers.get(SERVER_VERSION_HEADER));
    if (version !== undefined) {
      const key = `${version.protocolVersion}/${version.harnessVersion}`;
      if (key !== last) {
        last = key;
        try {
          onServerVersion(version);
        } catch {
          // An observer's failure is its own: the call goes on.
        }
      }
    }
    return response;
  };
}

/**
 * The notice a surface shows for a server version: undefined when it matches this client and did
 * not change, else one sentence or two (no prefix); a protocol other than the client's warns that operations may fail.
 * `previous` is the version seen before on the same connection (then this is a change).
 */
export function serverVersionNotice(version: ServerVersion, client: ServerVersion, previous?: ServerVersion): string | undefined {
  const same = (a: ServerVersion, b: ServerVersion): boolean => a.protocolVersion === b.protocolVersion && a.harnessVersion === b.harnessVersion;
  const name = (v: ServerVersion): string => `Ze Harness ${v.harnessVersion} (protocol ${v.protocolVersion})`;
  const changed = previous !== undefined && !same(previous, version);
  if (!changed && same(version, client)) return undefined;
  const what = changed ? `the server changed from ${name(previous!)} to ${name(version)}` : `the server runs ${name(version)}; this client is ${name(client)}`;
  const warning = version.protocolVersion !== client.protocolVersion ? ` The protocols differ (server ${version.protocolVersion}, client ${client.protocolVersion}): operations may fail.` : "";
  const sentence = `${what.charAt(0).toUpperCase()}${what.slice(1)}.`;
  return `${sentence}${warning}`;
}
