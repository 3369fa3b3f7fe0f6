// The one way every command reports a failure: one `error: …` line on stderr and the exit codes
// scripts rely on — 2 for usage errors (anything wrong with the command line), 1 for the rest
// (API errors, storage and config problems, I/O). Imports nothing heavy (no oclif, no client).
import { stripVTControlCharacters } from "node:util";

/** oclif's multi-line messages (lists, "See more help with --help", ANSI) folded into one line. */
export function oneLine(text: string): string {
  return stripVTControlCharacters(text)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && line !== "See more help with --help")
    .join(" ")
    .replace(/\s+/g, " ");
}

/** Something wrong with the command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
  override name = "UsageError";
}

export function usageError(message: string): UsageError {
  return new UsageError(message);
}

/** The stderr line and exit code for any failure. */
export function describeError(error: unknown): { readonly line: string; readonly exitCode: number } {
  const failure = error as { body?: { _tag?: unknown; message?: unknown }; tag?: unknown; _tag?: unknown } | null;
  // An API error: ZeClientError, or anything carrying the contract's encoded error body.
  if (typeof failure?.body?._tag === "string") {
    return { line: `error: ${failure.body._tag}: ${oneLine(String(failure.body.message ?? ""))}`, exitCode: 1 };
  }
  const message = oneLine(error instanceof Error ? error.message : String(error));
  if (error instanceof UsageError) return { line: `error: ${message}`, exitCode: 2 };
  // A host that could not start (HarnessStartupError: StorageUnreachable, ConfigInvalid, …) or a tagged storage error.
  const tag = typeof failure?.tag === "string" ? failure.tag : typeof failure?._tag === "string" ? failure._tag : undefined;
  if (tag !== undefined) return { line: `error: ${tag}: ${message}`, exitCode: 1 };
  return { line: `error: ${message}`, exitCode: 1 };
}

/** The one-line form of a failure, for commands that report and go on (chat, interactions). */
export const errorLine = (error: unknown): string => describeError(error).line;
