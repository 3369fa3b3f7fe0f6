// Archived tool output (`<workdir>/.ze-harness/tool-output/<uuid>.log`, or the configured
// artifacts directory) holds whatever a command printed — tokens, file contents — so it is
// private like everything else the harness writes: each file 0600, its directory 0700 (made so,
// and tightened when an earlier version left it wider). Other local users are hostile.
import { chmodSync, lstatSync, realpathSync } from "node:fs";
import { makeDirectorySync } from "../contract/directory.js";

export const ARCHIVE_FILE_MODE = 0o600;
export const ARCHIVE_DIRECTORY_MODE = 0o700;

/** Makes the artifacts directory (0700, with any missing parents) and resolves it to its canonical path. */
export function prepareArchiveDirectory(directory: string): string {
  makeDirectorySync(directory, ARCHIVE_DIRECTORY_MODE);
  // Only a real directory of ours is tightened (never a symlink's target, never another user's).
  const stat = lstatSync(directory);
  if (stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o777) !== ARCHIVE_DIRECTORY_MODE) chmodSync(directory, ARCHIVE_DIRECTORY_MODE);
  return realpathSync(directory);
}
