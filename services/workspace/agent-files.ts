// Markdown agent files: `<state>/agents/**/*.md`, YAML frontmatter for options and the body for
// the system prompt. Discovery is best-effort as the reference requires (matching OpenCode):
// anything that cannot become an agent — unreadable, malformed YAML, no closing delimiter — is
// skipped, never fatal, and reported in `skipped` only so callers can log it. Deciding what the
// options mean (and rejecting unsupported ones) belongs to agents.ts; this file only finds the
// files, names them and splits them.
//
// Where the files are read is a seam (`AgentFileSystem`): the host's disk by default; the Worker
// host passes its `/workspace` store (worker/agents.ts).
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseFrontmatter } from "./frontmatter.js";

/** Longest agent ID the contract allows (`SessionAgentEntry.id`). */
export const MAX_AGENT_ID_LENGTH = 128;

// One segment: starts with a lowercase letter; lowercase letters and digits joined by single
// `.`, `_` or `-` (so no leading, trailing or doubled separators).
const SEGMENT = "[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*";
const SEGMENT_PATTERN = new RegExp(`^${SEGMENT}$`);
const ID_PATTERN = new RegExp(`^${SEGMENT}(?:/${SEGMENT})*$`);

/** Whether `id` is a valid agent ID: ≤ 128 characters of `/`-separated segments. */
export function isAgentId(id: string): boolean {
  return id.length <= MAX_AGENT_ID_LENGTH && ID_PATTERN.test(id);
}

/** One Markdown file that has frontmatter and a valid agent filename. */
export interface AgentFile {
  /** The absolute path it was found at (below the agents directory, links not resolved). */
  readonly file: string;
  /** The relative path without `.md`: `team/reviewer.md` → `team/reviewer`. */
  readonly id: string;
  /** The frontmatter mapping as plain data (`{}` for empty frontmatter); not yet checked. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The body after the closing delimiter, trimmed (may be empty). */
  readonly body: string;
}

export type AgentFileSkipReason =
  | "invalid-id"
  | "no-frontmatter"
  | "unreadable"
  /** No closing `---`, malformed YAML (duplicate keys, too many aliases) or not a mapping. */
  | "invalid-frontmatter"
  /** The mapping parsed but an option has the wrong type or value; decided in agents.ts. */
  | "malformed-options"
  /** A new agent (not a patch of a registered one) without instructions; decided in agents.ts. */
  | "missing-instructions"
  /** A directory left unread because the scan hit `MAX_AGENT_SCAN_DIRECTORIES`. */
  | "scan-limit";

/** A `.md` file that did not become an agent, and why. Diagnostics only: never an error. */
export interface AgentFileSkip {
  readonly file: string;
  readonly reason: AgentFileSkipReason;
  readonly message: string;
}

export interface AgentFileScan {
  /** Parsed files in lexical order of their IDs. */
  readonly files: readonly AgentFile[];
  readonly skipped: readonly AgentFileSkip[];
}

/** What the scan reads, synchronously (the catalog loads synchronously). */
export interface AgentFileSystem {
  /** Entry names of a directory; throws when it cannot be read. */
  readdir(path: string): readonly string[];
  /** Follows links; undefined when nothing (or a broken link) is there. */
  stat(path: string): { isDirectory(): boolean; isFile(): boolean } | undefined;
  /** The canonical path; undefined when nothing is there. */
  realpath(path: string): string | undefined;
  /** The file as UTF-8 text (malformed bytes replaced, as `readFileSync(path, "utf8")`); throws when unreadable. */
  readText(path: string): string;
}

interface Candidate {
  readonly file: string;
  readonly relative: string;
}

/** The host's disk through `node:fs`. */
export const diskAgentFiles: AgentFileSystem = {
  readdir: (path) => readdirSync(path),
  stat(path) {
    try {
      return statSync(path); // follows links; a broken link throws and is skipped
    } catch {
      return undefined;
    }
  },
  realpath(path) {
    try {
      return realpathSync(path);
    } catch {
      return undefined;
    }
  },
  readText: (path) => readFileSync(path, "utf8"),
};

/**
 * At most this many directories are read per scan. Cycles are cut, but a symlinked directory
 * reachable by several paths is scanned once per path (each path is a distinct ID prefix), so
 * a pathological tree of links could otherwise grow exponentially.
 */
export const MAX_AGENT_SCAN_DIRECTORIES = 10_000;

interface Walk {
  readonly fs: AgentFileSystem;
  readonly candidates: Candidate[];
  readonly skipped: AgentFileSkip[];
  directories: number;
}

// Depth-first walk, following symlinked files and directories. `ancestors` holds the canonical
// paths of the directories on the current branch: meeting one again is a cycle and is skipped.
// A directory whose name is not a valid ID segment, or whose path is already too long for an
// ID, cannot contain an agent, so it is not entered.
function walk(directory: string, prefix: string, ancestors: ReadonlySet<string>, state: Walk): void {
  if (state.directories >= MAX_AGENT_SCAN_DIRECTORIES) {
    // Reported once, for the first directory left out.
    if (state.directories++ === MAX_AGENT_SCAN_DIRECTORIES) {
      state.skipped.push({ file: directory, reason: "scan-limit", message: `not scanned: more than ${MAX_AGENT_SCAN_DIRECTORIES} directories` });
    }
    return;
  }
  state.directories += 1;
  let names: string[];
  try {
    names = [...state.fs.readdir(directory)];
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(directory, name);
    const relative = prefix === "" ? name : `${prefix}/${name}`;
    const stat = state.fs.stat(file);
    if (stat === undefined) continue;
    if (stat.isDirectory()) {
      // The shortest ID below is `relative/x`.
      if (!SEGMENT_PATTERN.test(name) || relative.length + 2 > MAX_AGENT_ID_LENGTH) continue;
      const real = state.fs.realpath(file);
      if (real === undefined || ancestors.has(real)) continue;
      walk(file, relative, new Set([...ancestors, real]), state);
    } else if (stat.isFile() && name.endsWith(".md")) {
      state.candidates.push({ file, relative });
    }
  }
}

/**
 * Every agent file below `directory` (absent or unreadable → none), read one at a time in
 * lexical order of the relative path. Files without a valid agent filename or without an
 * opening `---` are ignored; unreadable ones, malformed YAML and a missing closing `---` are
 * skipped. Both kinds land in `skipped`, nothing fails.
 */
export function scanAgentFiles(directory: string, fs: AgentFileSystem = diskAgentFiles): AgentFileScan {
  const root = fs.realpath(directory);
  if (root === undefined || fs.stat(root)?.isDirectory() !== true) return { files: [], skipped: [] };
  const skipped: AgentFileSkip[] = [];
  const state: Walk = { fs, candidates: [], skipped, directories: 0 };
  walk(directory, "", new Set([root]), state);
  const candidates = state.candidates;
  // Plain code-unit order, not locale order: the same tree loads the same way everywhere.
  candidates.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));

  const files: AgentFile[] = [];
  for (const { file, relative } of candidates) {
    const id = relative.slice(0, -".md".length);
    if (!isAgentId(id)) {
      skipped.push({ file, reason: "invalid-id", message: `${JSON.stringify(id)} is not a valid agent ID` });
      continue;
    }
    let text: string;
    try {
      text = fs.readText(file);
    } catch (error) {
      skipped.push({ file, reason: "unreadable", message: error instanceof Error ? error.message : String(error) });
      continue;
    }
    // frontmatter.ts (shared with SKILL.md) splits and parses with `yaml`'s defaults: duplicate
    // keys fail, aliases expand only up to the parser's limit.
    const parsed = parseFrontmatter(text.replace(/^\uFEFF/, ""));
    if (parsed._tag === "FrontmatterMissing") {
      skipped.push({ file, reason: "no-frontmatter", message: "no opening --- line" });
      continue;
    }
    if (parsed._tag === "FrontmatterInvalid") {
      skipped.push({ file, reason: "invalid-frontmatter", message: parsed.message });
      continue;
    }
    files.push({ file, id, options: parsed.data, body: parsed.body.trim() });
  }
  return { files, skipped };
}
