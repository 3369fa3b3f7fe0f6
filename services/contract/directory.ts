// `mkdir -p` that always ends. Node 20's `mkdir(path, { recursive: true })` never returns when a
// parent exists but refuses children with ENOENT (`/proc/x/y` spins at 100 % CPU forever: its
// loop retries the child after the parent's EEXIST), so `--database /proc/x/y.db` hung the
// command. These walk up once to the nearest existing directory, create each missing one in turn
// with `mode`, and fail with the first real error (ENOENT, ENOTDIR, EACCES…), which names the
// directory that could not be made. The path is walked as written (`dirname`, never `resolve`):
// the kernel resolves `..` after a symbolic link, as `mkdir -p` does, where text would not.
import { mkdirSync, statSync, type Stats } from "node:fs";
import { dirname } from "node:path";

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** An existing path that is not a directory, as mkdir would word it (its EEXIST would mislead). */
const notADirectory = (path: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: "ENOTDIR", errno: -20, syscall: "mkdir", path });

/** Creates `path` and its missing parents with `mode` (like `mkdir -p`); returns once it is a directory. */
export function makeDirectorySync(path: string, mode?: number): void {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    let info: Stats;
    try {
      info = statSync(current);
    } catch (error) {
      if (codeOf(error) !== "ENOENT") throw error;
      missing.unshift(current);
      if (dirname(current) === current) break;
      continue;
    }
    if (!info.isDirectory()) throw notADirectory(current);
    break;
  }
  // `path` itself was there (and a directory): nothing to make.
  if (missing.length === 0) return;
  for (const directory of missing) {
    try {
      mkdirSync(directory, { mode: mode ?? 0o777 });
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error;
      if (!statSync(directory).isDirectory()) throw notADirectory(directory);
    }
  }
  if (!statSync(path).isDirectory()) throw notADirectory(path);
}

/**
 * `makeDirectorySync` for async callers: a stat per missing level and a mkdir each — a few
 * microseconds, on paths that are missing only the first time (a state directory, a cache) —
 * so one implementation serves both rather than a copy over fs/promises.
 */
export async function makeDirectory(path: string, mode?: number): Promise<void> {
  makeDirectorySync(path, mode);
}
