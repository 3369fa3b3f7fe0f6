// What Turn recording may look at inside a git repository: the files git would not ignore.
// `recordingRules(workdir, env)` finds the repository holding the workdir (a `.git` directory, or
// a `.git` file naming the gitdir of a linked worktree, at the workdir or any parent) and answers
// `ignored(path, isDirectory)` for a path relative to the workdir with git's rules, read with the
// `ignore` package: the global excludes file (`core.excludesFile`, else
// `$XDG_CONFIG_HOME/git/ignore`), `.git/info/exclude`, then every `.gitignore` from the
// repository root down to the path's directory — a later (deeper) file's match wins, a negation
// un-ignores. `.gitignore` files are re-read only when their stat identity changes.
//
// Not modelled: files git tracks although a pattern ignores them (git records them; here they
// are left out), and `core.excludesFile` set through an include.
import { lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { parseGitConfig } from "../git/repository.js";

export interface RecordingRules {
  /** The repository's root directory (canonical). */
  readonly root: string;
  /** Its gitdir (the `.git` directory, or the linked worktree's gitdir). */
  readonly gitdir: string;
  /** The workdir relative to the root ("" when the workdir is the root), "/"-separated. */
  readonly prefix: string;
  /** Whether git would ignore `path` (relative to the workdir, "/"-separated). */
  ignored(path: string, isDirectory: boolean): boolean;
  /**
   * A string that changes when a rule file above the workdir's own `.gitignore` changes (the
   * global excludes, `info/exclude`, the `.gitignore`s of the workdir's parents): the scan adds
   * each directory's own `.gitignore` identity to it (`ruleFileKey`).
   */
  baseIdentity(): string;
}

type Env = Readonly<Record<string, string | undefined>>;

interface RuleFile {
  readonly key: string;
  readonly matcher: Ignore | undefined;
}

/** Files read by content identity: path → (stat key, matcher). Bounded: a few hundred repositories' worth. */
const ruleFiles = new Map<string, RuleFile>();
const MAX_RULE_FILES = 4096;

/** A rule file's stat identity ("" when absent): a listing cached under an old one is stale. */
export const ruleFileKey = (path: string): string => statKey(path) ?? "";

function statKey(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat?.isFile() ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : undefined;
}

function ruleFile(path: string): RuleFile {
  const key = statKey(path) ?? "absent";
  const known = ruleFiles.get(path);
  if (known?.key === key) return known;
  let matcher: Ignore | undefined;
  if (key !== "absent") {
    try {
      const text = readFileSync(path, "utf8");
      if (text.trim() !== "") matcher = ignore({ allowRelativePaths: true }).add(text);
    } catch {
      matcher = undefined;
    }
  }
  const file = { key, matcher };
  if (ruleFiles.size >= MAX_RULE_FILES) ruleFiles.clear();
  ruleFiles.set(path, file);
  return file;
}

function homeOf(env: Env): string | undefined {
  const home = env["HOME"];
  return home && isAbsolute(home) ? home : undefined;
}

function expandHome(path: string, env: Env): string | undefined {
  if (path === "~" || path.startsWith("~/")) {
    const home = homeOf(env);
    return home ? join(home, path.slice(1)) : undefined;
  }
  return isAbsolute(path) ? path : undefined;
}

function readConfigValue(file: string, key: string): string | undefined {
  try {
    return parseGitConfig(readFileSync(file, "utf8")).get(key)?.at(-1);
  } catch {
    return undefined;
  }
}

/** The global excludes file git would read for this repository. */
export function globalExcludesFile(gitdir: string, env: Env): string | undefined {
  const home = homeOf(env);
  const xdg = env["XDG_CONFIG_HOME"] && isAbsolute(env["XDG_CONFIG_HOME"]) ? env["XDG_CONFIG_HOME"] : home ? join(home, ".config") : undefined;
  // Later files win: the XDG file, then ~/.gitconfig, then the repository's own config.
  const configs = [xdg ? join(xdg, "git", "config") : undefined, home ? join(home, ".gitconfig") : undefined, join(gitdir, "config")];
  let configured: string | undefined;
  for (const file of configs) if (file) configured = readConfigValue(file, "core.excludesfile") ?? configured;
  if (configured !== undefined) return expandHome(configured, env);
  return xdg ? join(xdg, "git", "ignore") : undefined;
}

/** The repository holding `workdir` (canonical), or undefined outside any. */
export function findRepository(workdir: string): { root: string; gitdir: string } | undefined {
  for (let dir = workdir; ; dir = dirname(dir)) {
    const dotgit = join(dir, ".git");
    const stat = lstatSync(dotgit, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return { root: dir, gitdir: dotgit };
    if (stat?.isFile()) {
      try {
        const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotgit, "utf8"));
        if (match) return { root: dir, gitdir: isAbsolute(match[1]!) ? match[1]! : join(dir, match[1]!) };
      } catch {
        return undefined;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** git's rules for `workdir`'s repository, or undefined when no repository holds it. */
export function recordingRules(workdir: string, env: Env): RecordingRules | undefined {
  const repo = findRepository(workdir);
  if (!repo) return undefined;
  const prefix = relative(repo.root, workdir).split(sep).join("/");
  const globalFile = globalExcludesFile(repo.gitdir, env);
  const baseFiles = [...(globalFile ? [globalFile] : []), join(repo.gitdir, "info", "exclude")];
  const repoPath = (path: string): string => (prefix === "" ? path : path === "" ? prefix : `${prefix}/${path}`);

  /** The rule files that apply inside the repository directory `dir` ("" = root), lowest precedence first. */
  const filesFor = (dir: string): string[] => {
    const files = [...baseFiles];
    const parts = dir === "" ? [] : dir.split("/");
    for (let depth = 0; depth <= parts.length; depth++) files.push(join(repo.root, ...parts.slice(0, depth), ".gitignore"));
    return files;
  };

  return {
    root: repo.root,
    gitdir: repo.gitdir,
    prefix,
    ignored(path, isDirectory) {
      const inRepo = repoPath(path);
      const slash = inRepo.lastIndexOf("/");
      const parent = slash < 0 ? "" : inRepo.slice(0, slash);
      const parentParts = parent === "" ? [] : parent.split("/");
      let verdict = false;
      const files = filesFor(parent);
      for (let index = 0; index < files.length; index++) {
        const matcher = ruleFile(files[index]!).matcher;
        if (!matcher) continue;
        // Base files match from the root; a .gitignore from its own directory.
        const depth = index - baseFiles.length;
        const from = depth <= 0 ? inRepo : parentParts.slice(depth).concat(inRepo.slice(slash + 1)).join("/");
        if (from === "") continue;
        const result = matcher.test(isDirectory ? `${from}/` : from);
        if (result.ignored) verdict = true;
        else if (result.unignored) verdict = false;
      }
      return verdict;
    },
    baseIdentity() {
      const parts = prefix === "" ? [] : prefix.split("/");
      const above = parts.map((_, depth) => join(repo.root, ...parts.slice(0, depth), ".gitignore"));
      return [...baseFiles, ...above].map((file) => ruleFile(file).key).join("|");
    },
  };
}
