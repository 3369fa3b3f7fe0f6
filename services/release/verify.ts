// The checks install.sh makes, in TypeScript for `update`: a channel pointer signed by the release
// certificate, bound to its channel and not older than the last accepted one; the detached manifest
// signature and the manifest the pointer names; the archive's SHA-256 from the signed manifest.
// RSA/SHA-256 (node:crypto). Every refusal is a ReleaseError; nothing here touches the disk.
import { createHash, verify, X509Certificate } from "node:crypto";

export class ReleaseError extends Error {
  constructor(
    readonly _tag: "ReleaseVerificationFailed" | "ReleaseUnavailable" | "NotInstalled" | "UninstallRefused",
    message: string,
  ) {
    super(message);
    this.name = _tag;
  }
}

export interface Pointer {
  readonly channel: string;
  readonly version: string;
  readonly sequence: number;
  readonly manifest: string;
  readonly manifestSha256: string;
}

export interface ManifestArchive {
  readonly name: string;
  readonly platform: string;
  readonly sha256: string;
  readonly size: number;
}

export interface Manifest {
  readonly version: string;
  readonly archives: readonly ManifestArchive[];
}

export const VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/;

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

const refuse = (message: string): ReleaseError => new ReleaseError("ReleaseVerificationFailed", `${message}; nothing was installed`);

function signedBy(certificate: string, data: Uint8Array, signature: string): boolean {
  try {
    return verify("sha256", data, new X509Certificate(certificate).publicKey, Buffer.from(signature.trim(), "base64"));
  } catch {
    return false;
  }
}

/** The pointer at channels/<channel>.json, verified; `seen` is the last sequence accepted on that channel. */
export function verifyPointer(text: string, certificate: string, channel: string, seen: number): Pointer {
  let envelope: { payload?: unknown; signature?: unknown };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    throw refuse(`the ${channel} pointer is malformed`);
  }
  if (typeof envelope.payload !== "string" || typeof envelope.signature !== "string") throw refuse(`the ${channel} pointer is malformed`);
  const payload = Buffer.from(envelope.payload, "base64");
  if (!signedBy(certificate, payload, envelope.signature)) throw refuse(`the ${channel} channel pointer: the signature does not verify with the release certificate`);
  const pointer = JSON.parse(payload.toString("utf8")) as Partial<Pointer>;
  if (pointer.channel !== channel) throw refuse(`the pointer at channels/${channel}.json is signed for the ${String(pointer.channel)} channel, not ${channel}`);
  if (typeof pointer.version !== "string" || !VERSION.test(pointer.version) || typeof pointer.sequence !== "number" || typeof pointer.manifestSha256 !== "string") {
    throw refuse(`the ${channel} pointer names no valid release`);
  }
  if (pointer.sequence < seen) {
    throw refuse(`the ${channel} pointer (sequence ${pointer.sequence}) is older than the one this installation accepted (sequence ${seen}): a replayed pointer`);
  }
  return pointer as Pointer;
}

/** releases/v<version>/manifest.json with its detached signature, and (from a pointer) its SHA-256. */
export function verifyManifest(bytes: Uint8Array, signature: string, certificate: string, version: string, expectedSha256?: string): Manifest {
  if (!signedBy(certificate, bytes, signature)) throw refuse(`the v${version} manifest: the signature does not verify with the release certificate`);
  if (expectedSha256 !== undefined && sha256(bytes) !== expectedSha256) throw refuse(`the v${version} manifest is not the one the channel pointer names`);
  const manifest = JSON.parse(Buffer.from(bytes).toString("utf8")) as Manifest;
  if (manifest.version !== version || !Array.isArray(manifest.archives)) throw refuse(`the v${version} manifest names another version`);
  return manifest;
}

/** The archive's one accepted name (install.sh builds the same): never a path, whatever the manifest says. */
export const archiveName = (version: string, platform: string): string => `ze-harness-${version}-${platform}.${platform.startsWith("darwin-") ? "zip" : "tar.gz"}`;

export function archiveFor(manifest: Manifest, platform: string): ManifestArchive {
  const archive = manifest.archives.find((candidate) => candidate.platform === platform);
  if (archive === undefined) throw new ReleaseError("ReleaseUnavailable", `v${manifest.version} has no archive for ${platform}`);
  const expected = archiveName(manifest.version, platform);
  if (archive.name !== expected) throw refuse(`the v${manifest.version} manifest names its ${platform} archive ${JSON.stringify(archive.name)}, not ${expected}`);
  if (typeof archive.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(archive.sha256)) throw refuse(`the v${manifest.version} manifest gives no SHA-256 for ${expected}`);
  if (!Number.isSafeInteger(archive.size) || archive.size <= 0) throw refuse(`the v${manifest.version} manifest gives no size for ${expected}`);
  return archive;
}

export function verifyArchive(bytes: Uint8Array, archive: ManifestArchive): void {
  if (sha256(bytes) !== archive.sha256) throw refuse(`${archive.name} does not match the SHA-256 in the signed manifest`);
}
