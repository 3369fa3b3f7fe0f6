// Workdir path helpers every room may use: where a path lies relative to a root, and the
// absolute directory a stored Session workdir names (stored relative inside the server root,
// or absolute).
import { isAbsolute, relative, resolve, sep } from "node:path";

/** Path of `target` relative to `root` in forward slashes (`.` for the root), or undefined when outside it. */
export function insideRoot(root: string, target: string): string | undefined {
  const rel = relative(root, target);
  if (rel === "") return ".";
  if (rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

/** The absolute directory of a Session's stored workdir. */
export function absoluteWorkdir(serverRoot: string, stored: string): string {
  return isAbsolute(stored) ? stored : resolve(serverRoot, stored);
}
