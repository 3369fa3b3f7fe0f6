// Project identity, like opencode (shared by the server, for a Session's projectId, and by clients,
// for the project `session list` asks for): Sessions whose workdirs share a git repository
// share a project. The id hashes the repository's `origin` remote URL (so clones
// of one repository agree), falls back to the first remote, then to the
// repository's own root path; outside any repository the project is `global`.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export const GLOBAL_PROJECT = "global";

/** The directory holding `.git` (a directory or a worktree/submodule `gitdir:` file), if any. */
export function findRepositoryRoot(start: string): string | undefined {
  let current = resolve(start);
  for (;;) {
    if (existsSync(join(current, ".git"))) return current;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

function gitDirectory(repositoryRoot: string): string {
  const dotGit = join(repositoryRoot, ".git");
  if (statSync(dotGit).isDirectory()) return dotGit;
  const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
  return pointer ? resolve(repositoryRoot, pointer[1]!.trim()) : dotGit;
}

/** Remote URLs from a git config file, `origin` first. */
export function remoteUrls(configText: string): string[] {
  const remotes: { name: string; url: string }[] = [];
  let section: string | undefined;
  for (const raw of configText.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[remote\s+"([^"]+)"\]$/.exec(line);
    if (header) {
      section = header[1];
      continue;
    }
    if (line.startsWith("[")) {
      section = undefined;
      continue;
    }
    const url = /^url\s*=\s*(.+)$/.exec(line);
    if (section !== undefined && url) remotes.push({ name: section, url: url[1]!.trim() });
  }
  remotes.sort((a, b) => Number(b.name === "origin") - Number(a.name === "origin"));
  return remotes.map((remote) => remote.url);
}

/** `git@host:owner/repo.git`, `https://host/owner/repo` and `ssh://git@host/owner/repo.git` agree. */
export function normalizeRemote(url: string): string {
  let value = url.trim().replace(/\.git$/, "").replace(/\/+$/, "");
  const scp = /^([^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(value);
  if (scp) value = `${scp[2]}/${scp[3]}`;
  else value = value.replace(/^[a-z+]+:\/\//i, "").replace(/^[^@/]+@/, "");
  return value.toLowerCase();
}

const hash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 40);

export function resolveProjectId(directory: string): string {
  const root = findRepositoryRoot(directory);
  if (root === undefined) return GLOBAL_PROJECT;
  try {
    const config = readFileSync(join(gitDirectory(root), "config"), "utf8");
    const remote = remoteUrls(config)[0];
    if (remote !== undefined) return hash(`remote:${normalizeRemote(remote)}`);
  } catch {
    // An unreadable git config still leaves the repository root as identity.
  }
  return hash(`root:${root}`);
}
