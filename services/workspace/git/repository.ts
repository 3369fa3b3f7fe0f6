// Finding the Session's repository and refusing what git observation here cannot interpret
// faithfully. The workdir must be the repository root with a `.git` directory (a linked
// worktree's `.git` file, or a workdir below the root, fail explicitly); no repository above
// the workdir either means "no repository" (null). Refused before any walk: repository format
// extensions (sha256 objects, reftable), config includes (they could enable anything), sparse
// checkout, `core.autocrlf` text conversion, submodules (`.gitmodules`), and attributes that
// name filters or conversions (`.git/info/attributes`, the root `.gitattributes`; nested
// attribute files are checked as the walk meets them). Nothing here runs a command.
import { promises as fsp } from "node:fs";
import { dirname, join } from "node:path";
import { WorkspaceUnsupported } from "./unsupported.js";

export interface Repository {
  readonly dir: string;
  readonly gitdir: string;
}

async function kind(path: string): Promise<"directory" | "file" | "other" | undefined> {
  try {
    const stat = await fsp.lstat(path);
    return stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other";
  } catch {
    return undefined;
  }
}

/** The repository whose root is `workdir`, undefined outside any repository; refuses the other layouts. */
export async function locateRepository(workdir: string): Promise<Repository | undefined> {
  const dotgit = join(workdir, ".git");
  const found = await kind(dotgit);
  if (found === "directory") return { dir: workdir, gitdir: dotgit };
  if (found !== undefined) throw new WorkspaceUnsupported("linked_worktree", "The workdir's .git is not a directory (a linked worktree or a gitdir link); only a repository's main worktree is supported");
  for (let dir = dirname(workdir); ; dir = dirname(dir)) {
    if ((await kind(join(dir, ".git"))) !== undefined) {
      throw new WorkspaceUnsupported("not_repository_root", "The workdir is inside a repository but is not its root; git observation needs the workdir to be the repository root");
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** A minimal git config reader: `section[.subsection].key` (section and key lower-cased) → values. */
export function parseGitConfig(text: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      const [name, ...rest] = header[1]!.split(".");
      const sub = header[2] ?? (rest.length > 0 ? rest.join(".") : undefined);
      section = sub !== undefined ? `${name!.toLowerCase()}.${sub}` : name!.toLowerCase();
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!entry) continue;
    const key = `${section}.${entry[1]!.toLowerCase()}`;
    let value = (entry[2] ?? "true").replace(/\s+[#;].*$/, "").trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    values.set(key, [...(values.get(key) ?? []), value]);
  }
  return values;
}

const truthy = (value: string | undefined): boolean => value !== undefined && ["true", "yes", "on", "1"].includes(value.toLowerCase());

/** Attribute names whose effect git observation cannot reproduce. */
export function unsupportedAttribute(text: string): { feature: "external_filter" | "text_conversion"; attribute: string } | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, ...attributes] = line.split(/\s+/);
    for (const attribute of attributes) {
      if (attribute.startsWith("-") || attribute.startsWith("!")) continue;
      const [name, value] = attribute.split("=", 2) as [string, string | undefined];
      if (name === "filter") return { feature: "external_filter", attribute };
      if (name === "ident" || name === "working-tree-encoding" || (name === "eol" && value === "crlf")) return { feature: "text_conversion", attribute };
    }
  }
  return undefined;
}

export function checkAttributes(text: string, file: string): void {
  const found = unsupportedAttribute(text);
  if (!found) return;
  const what = found.feature === "external_filter" ? "an external filter" : "a text conversion";
  throw new WorkspaceUnsupported(found.feature, `${file} sets ${found.attribute}: ${what} is not supported (configured commands are never run)`);
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

const HARMLESS_EXTENSIONS = new Set(["extensions.noop", "extensions.preciousobjects", "extensions.worktreeconfig"]);

/** Refuses repository features git observation cannot interpret; read before every query. */
export async function checkRepositoryFeatures(repo: Repository): Promise<void> {
  const config = parseGitConfig((await readOptional(join(repo.gitdir, "config"))) ?? "");
  const format = Number(config.get("core.repositoryformatversion")?.at(-1) ?? "0");
  if (!(format === 0 || format === 1)) throw new WorkspaceUnsupported("repository_format", `core.repositoryformatversion ${format} is not supported`);
  for (const key of config.keys()) {
    if (key.startsWith("extensions.") && !HARMLESS_EXTENSIONS.has(key)) {
      throw new WorkspaceUnsupported("repository_format", `The repository extension ${key.slice("extensions.".length)} is not supported`);
    }
    if (key === "include.path" || key.startsWith("includeif.")) throw new WorkspaceUnsupported("repository_format", "Config includes are not supported (they could change how the repository is read)");
  }
  if (truthy(config.get("core.sparsecheckout")?.at(-1)) || (await kind(join(repo.gitdir, "info", "sparse-checkout"))) === "file") {
    throw new WorkspaceUnsupported("sparse_checkout", "Sparse checkout is not supported");
  }
  const autocrlf = config.get("core.autocrlf")?.at(-1)?.toLowerCase();
  if (autocrlf !== undefined && autocrlf !== "false" && autocrlf !== "no" && autocrlf !== "off" && autocrlf !== "0") {
    throw new WorkspaceUnsupported("text_conversion", `core.autocrlf=${autocrlf} (line-ending conversion) is not supported`);
  }
  if ((await kind(join(repo.dir, ".gitmodules"))) !== undefined) throw new WorkspaceUnsupported("submodule", "Submodules are not supported (.gitmodules)");
  const info = await readOptional(join(repo.gitdir, "info", "attributes"));
  if (info !== undefined) checkAttributes(info, ".git/info/attributes");
  const root = await readOptional(join(repo.dir, ".gitattributes"));
  if (root !== undefined) checkAttributes(root, ".gitattributes");
}

/** HEAD's branch name; undefined when HEAD is detached (or unreadable). */
export async function readBranch(repo: Repository): Promise<string | undefined> {
  const text = await fsp.readFile(join(repo.gitdir, "HEAD"), "utf8").catch(() => "");
  const match = /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(text);
  return match?.[1];
}

/** Whether exec-bit changes count (`core.filemode` not false). */
export async function fileModeTrusted(repo: Repository): Promise<boolean> {
  const config = parseGitConfig((await readOptional(join(repo.gitdir, "config"))) ?? "");
  const value = config.get("core.filemode")?.at(-1)?.toLowerCase();
  return !(value === "false" || value === "no" || value === "off" || value === "0");
}
