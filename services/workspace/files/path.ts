// WorkspacePath: a workdir-relative path carried as its exact pathname bytes (`bytesBase64`).
// Decoding refuses anything that could leave the workdir or name it ambiguously: absolute
// paths, empty, `.` and `..` segments, NUL, non-canonical Base64; and names no filesystem holds
// (a segment over 255 bytes), which would otherwise fail deep in a system call. Resolution to a
// filesystem path keeps the bytes (a Buffer path), so names that are not UTF-8 survive unchanged.
import { Buffer } from "node:buffer";
import { validationFailure } from "../../contract/failure.js";

/** Longest path accepted, in bytes (Linux PATH_MAX). */
export const MAX_WORKSPACE_PATH_BYTES = 4096;
/** Longest segment accepted, in bytes (Linux NAME_MAX: no filesystem holds a longer name). */
export const MAX_WORKSPACE_NAME_BYTES = 255;

/** Top-level names that are never listed, read or watched: git's directory and the harness's private state. */
export const PRIVATE_ROOT_NAMES: readonly string[] = [".git", ".ze-harness"];

export interface DecodedPath {
  /** The exact bytes. */
  readonly bytes: Buffer;
  /** Segments as bytes. */
  readonly segments: readonly Buffer[];
}

const SLASH = 0x2f;

/** Decodes a `bytesBase64` value (a query parameter or a WorkspacePath field). */
export function decodeWorkspacePath(value: string, field = "path"): DecodedPath {
  if (value.length === 0) throw validationFailure(`${field} must not be empty`);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) throw validationFailure(`${field} must be canonical Base64 (bytesBase64)`);
  const bytes = Buffer.from(value, "base64");
  if (bytes.toString("base64") !== value) throw validationFailure(`${field} must be canonical Base64 (bytesBase64)`);
  if (bytes.length > MAX_WORKSPACE_PATH_BYTES) throw validationFailure(`${field} must be at most ${MAX_WORKSPACE_PATH_BYTES} bytes`);
  if (bytes.includes(0)) throw validationFailure(`${field} must not contain NUL`);
  if (bytes[0] === SLASH) throw validationFailure(`${field} must be relative to the workdir, not absolute`);
  const segments: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === SLASH) {
      const segment = bytes.subarray(start, i);
      if (segment.length === 0) throw validationFailure(`${field} must not have empty segments`);
      const text = segment.toString("latin1");
      if (text === "." || text === "..") throw validationFailure(`${field} must not contain '.' or '..' segments`);
      if (segment.length > MAX_WORKSPACE_NAME_BYTES) throw validationFailure(`${field} has a name longer than ${MAX_WORKSPACE_NAME_BYTES} bytes`);
      segments.push(segment);
      start = i + 1;
    }
  }
  return { bytes, segments };
}

export const encodePath = (bytes: Uint8Array): { bytesBase64: string } => ({ bytesBase64: Buffer.from(bytes).toString("base64") });

/** The path's bytes joined below an absolute directory, as a Buffer path. */
export function underDirectory(directory: string, relative: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(directory.endsWith("/") ? directory : `${directory}/`), relative]);
}

/** Whether the path's first segment is private state (`.git`, `.ze-harness`) or any segment is `.git`. */
export function isPrivatePath(path: DecodedPath): boolean {
  const first = path.segments[0]?.toString("latin1");
  if (first !== undefined && PRIVATE_ROOT_NAMES.includes(first)) return true;
  return path.segments.some((segment) => segment.toString("latin1") === ".git");
}

/** Strict UTF-8 decoding, or undefined when the bytes are not UTF-8. */
export function utf8OrUndefined(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Orders byte strings as git does (unsigned bytewise). */
export const compareBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b);
