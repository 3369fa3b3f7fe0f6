// Local Skills: standard SKILL.md files discovered on the server host's disk (reference "Local
// Skills"). Discovery returns safe metadata plus where each file is; the body is read only when a
// Turn selects the Skill or the model calls `skill` (see skill-load.ts), so catalogs never carry it.
//
// Source order, earliest first; a later source replaces an earlier Skill of the same name (and a
// warning says so). Foreign tools' directories come before Ze Harness's own at each tier, global
// before project, shallower project levels before deeper ones, and configuration last, so the
// most specific and most deliberate declaration wins:
//
//   1. global  ~/.codex/skills
//   2. global  ~/.claude/skills
//   3. global  ~/.agents/skills
//   4. global  $XDG_CONFIG_HOME/opencode/skill   (XDG_CONFIG_HOME absolute, else ~/.config)
//   5. global  $XDG_CONFIG_HOME/opencode/skills
//   6. global  ~/.ze-harness/skills
//   7. project, for each directory from the repository root (nearest ancestor of the working
//      directory holding `.git`; the working directory alone outside a repository) down to the
//      working directory: .codex/skills, .claude/skills, .agents/skills, .opencode/skill,
//      .opencode/skills, .ze-harness/skills
//   8. config  each `skills` entry in its listed order (relative to the working directory; `~`
//      and `~/…` expand to HOME)
//
// Below each root every `SKILL.md` is found recursively (a root may itself hold one), in lexical
// order of its path under the root, so within a root the later path wins, as for the `directory`
// Skill source. Symlinks are followed; a directory already scanned — a cycle, or two roots that
// are the same place, such as a project `.agents/skills` linked to the global one — is skipped,
// so one file is never reported twice. `.git` and `node_modules` are not descended into. A missing
// (or non-directory) standard root is normal and silent; a missing or unreadable configured one,
// or an unreadable standard one, is a warning.
// Malformed files become warnings; discovery never throws.
//
// Where files are read is a seam (`SkillFileSystem`, skill-files.ts): the host's disk by default;
// the Worker host passes its `/workspace` store and its own roots (worker/skills.ts).
import { createHash } from "node:crypto";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { CatalogOrigin, SkillListEntry, SkillPublicMetadata } from "../../generated/client/types.gen.js";
import { configDirectory, homeDirectory, type Env } from "../config/paths.js";
import { findRepositoryRoot } from "../contract/project.js";
import { MAX_SKILL_FILE_BYTES, SKILL_FILE, parseSkillFile } from "./skill-file.js";
import { diskSkillFiles, type SkillDirent, type SkillFileSystem } from "./skill-files.js";

export { MAX_SKILL_DESCRIPTION_CHARS, MAX_SKILL_FILE_BYTES, MAX_SKILL_ID_LENGTH, SKILL_FILE } from "./skill-file.js";
export { MAX_SKILL_MANIFEST_ENTRIES, loadSkill, renderLoadedSkill } from "./skill-load.js";
export type { LoadedSkill, SkillFileEntry, SkillLoadFailed } from "./skill-load.js";
export { diskSkillFiles, type SkillDirent, type SkillFileSystem, type SkillFileStat } from "./skill-files.js";

/** Most directories one discovery reads, over all roots: a bound on a `skills` entry such as `~`. */
export const MAX_SKILL_SCAN_DIRECTORIES = 10_000;

/** Project-level Skill directories, relative to each level, in source order. */
export const PROJECT_SKILL_DIRECTORIES: readonly string[] = [".codex/skills", ".claude/skills", ".agents/skills", ".opencode/skill", ".opencode/skills", ".ze-harness/skills"];

const SKIPPED_DIRECTORIES = new Set([".git", "node_modules"]);

export type SkillSourceScope = "global" | "project" | "config";

/** One directory searched for Skills. */
export interface SkillSourceRoot {
  readonly scope: SkillSourceScope;
  /** Absolute path as configured (not canonicalized). */
  readonly directory: string;
}

/** A discovered Skill: safe metadata and where it lives. No body. */
export interface LocalSkill {
  /** Skill ID and the value passed to the `skill` tool (the frontmatter `name`). */
  readonly id: string;
  /** Shown to clients and the model; the `name`, as for every `directory`-format Skill. */
  readonly displayName: string;
  /** One line, at most MAX_SKILL_DESCRIPTION_CHARS characters. */
  readonly description: string;
  readonly advertised: boolean;
  readonly userInvocable: boolean;
  /** The declared `version`, else "1". Not sent to the model. */
  readonly version: string;
  /** Descriptive metadata for the Skill catalog; not sent to the model nor listed to clients. */
  readonly publicMetadata: SkillPublicMetadata;
  /** Absolute path of the SKILL.md, as reached from its root. */
  readonly file: string;
  /** The Skill's directory (`dirname(file)`): its base location for supporting files. */
  readonly directory: string;
  readonly source: SkillSourceRoot;
  /** SHA-256 (hex) of the SKILL.md text at discovery: a revision for retained Skill content. */
  readonly digest: string;
  /** Where the file is read from when the Skill loads; absent: the host's disk. */
  readonly files?: SkillFileSystem;
}

/** A later source declared a name again; `file` now provides it instead of `replaced`. */
export interface SkillDuplicate {
  readonly _tag: "SkillDuplicate";
  readonly id: string;
  readonly file: string;
  readonly replaced: string;
  readonly message: string;
}

/** A SKILL.md that was skipped: unreadable, not UTF-8, oversized or malformed. */
export interface SkillInvalid {
  readonly _tag: "SkillInvalid";
  readonly file: string;
  readonly message: string;
}

/** A directory that could not be searched (a configured root missing, or any unreadable one). */
export interface SkillDirectoryUnreadable {
  readonly _tag: "SkillDirectoryUnreadable";
  readonly directory: string;
  readonly message: string;
}

/** Discovery stopped reading directories at MAX_SKILL_SCAN_DIRECTORIES. */
export interface SkillScanLimit {
  readonly _tag: "SkillScanLimit";
  readonly directory: string;
  readonly message: string;
}

export type SkillWarning = SkillDuplicate | SkillInvalid | SkillDirectoryUnreadable | SkillScanLimit;

export interface SkillDiscovery {
  /** The effective Skills, sorted by ID. */
  readonly skills: readonly LocalSkill[];
  /** In the order they arose. */
  readonly warnings: readonly SkillWarning[];
}

export interface DiscoverSkillsOptions {
  /** The active working directory: project levels end here and relative `skills` entries resolve here. */
  readonly cwd: string;
  /** `HOME` and `XDG_CONFIG_HOME` (pass `process.env`, or a literal map in tests). */
  readonly env: Env;
  /** The configuration's `skills` directories, in their listed order. */
  readonly configSkills?: readonly string[] | undefined;
  /** Where SKILL.md files are searched and read; absent: the host's disk. */
  readonly files?: SkillFileSystem | undefined;
  /** The directories to search instead of `skillSourceRoots(options)` (a host without a home directory). */
  readonly roots?: readonly SkillSourceRoot[] | undefined;
}

function expandHome(entry: string, home: string): string | undefined {
  if (entry === "~") return home;
  if (entry.startsWith("~/")) return join(home, entry.slice(2));
  return undefined;
}

/** The project levels, repository root first and the working directory last. */
export function projectLevels(cwd: string, root: string | undefined = findRepositoryRoot(cwd)): string[] {
  if (root === undefined) return [cwd];
  const levels: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    levels.push(dir);
    if (dir === root || dirname(dir) === dir) break;
  }
  return levels.reverse();
}

/** Every directory searched, in source order (see the file comment). */
export function skillSourceRoots(options: DiscoverSkillsOptions): SkillSourceRoot[] {
  const cwd = resolve(options.cwd);
  const home = homeDirectory(options.env);
  // configDirectory is `<XDG config home>/ze-harness`; its parent applies the same XDG rules.
  const opencode = join(dirname(configDirectory(options.env)), "opencode");
  const roots: SkillSourceRoot[] = [
    join(home, ".codex", "skills"),
    join(home, ".claude", "skills"),
    join(home, ".agents", "skills"),
    join(opencode, "skill"),
    join(opencode, "skills"),
    join(home, ".ze-harness", "skills"),
  ].map((directory) => ({ scope: "global", directory }));
  roots.push(...projectSkillRoots(projectLevels(cwd)));
  for (const entry of options.configSkills ?? []) {
    roots.push({ scope: "config", directory: expandHome(entry, home) ?? resolve(cwd, entry) });
  }
  return roots;
}

/** The project roots of `levels` (repository root first), in source order. */
export function projectSkillRoots(levels: readonly string[]): SkillSourceRoot[] {
  return levels.flatMap((level) => PROJECT_SKILL_DIRECTORIES.map((sub): SkillSourceRoot => ({ scope: "project", directory: join(level, sub) })));
}

interface Scan {
  readonly files: SkillFileSystem;
  readonly seen: Set<string>;
  readonly warnings: SkillWarning[];
  directoriesLeft: number;
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The SKILL.md paths below `dir` (already canonicalized into `scan.seen`), depth first. */
async function collect(dir: string, scan: Scan, found: string[]): Promise<void> {
  if (scan.directoriesLeft <= 0) {
    if (!scan.warnings.some((w) => w._tag === "SkillScanLimit")) {
      scan.warnings.push({ _tag: "SkillScanLimit", directory: dir, message: `Stopped searching for Skills after ${MAX_SKILL_SCAN_DIRECTORIES} directories, at ${dir}.` });
    }
    return;
  }
  scan.directoriesLeft--;
  let entries: SkillDirent[];
  try {
    entries = [...(await scan.files.readdir(dir))];
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      scan.warnings.push({ _tag: "SkillDirectoryUnreadable", directory: dir, message: `Cannot search ${dir} for Skills (${code ?? "error"}).` });
    }
    return;
  }
  entries.sort((a, b) => byCodeUnit(a.name, b.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.name === SKILL_FILE && !entry.isDirectory()) {
      found.push(path); // reading it reports a broken link or a non-file
      continue;
    }
    if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
    let isDirectory = entry.isDirectory();
    if (entry.isSymbolicLink()) isDirectory = await scan.files.stat(path).then((s) => s.isDirectory(), () => false);
    if (!isDirectory) continue;
    const canonical = await scan.files.realpath(path).catch(() => undefined);
    if (canonical === undefined || scan.seen.has(canonical)) continue;
    scan.seen.add(canonical);
    await collect(path, scan, found);
  }
}

/** Reads one root: its SKILL.md paths in lexical order of their path under the root. */
async function scanRoot(root: SkillSourceRoot, scan: Scan): Promise<string[]> {
  const info = await scan.files.stat(root.directory).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error || !info.isDirectory()) {
    // A standard root that is missing or not a directory is simply not in use; only a configured
    // one was asked for explicitly. A standard root that exists but cannot be read is reported.
    const missing = info instanceof Error && (info.code === "ENOENT" || info.code === "ENOTDIR");
    if (root.scope === "config" || (info instanceof Error && !missing)) {
      const why = info instanceof Error ? (missing ? "it does not exist" : `it cannot be read (${info.code ?? "error"})`) : "it is not a directory";
      scan.warnings.push({ _tag: "SkillDirectoryUnreadable", directory: root.directory, message: `Cannot search ${root.directory} for Skills: ${why}.` });
    }
    return [];
  }
  const canonical = await scan.files.realpath(root.directory).catch(() => undefined);
  if (canonical === undefined || scan.seen.has(canonical)) return [];
  scan.seen.add(canonical);
  const found: string[] = [];
  await collect(root.directory, scan, found);
  const key = (path: string): string => relative(root.directory, path).split(sep).join("/");
  return found.sort((a, b) => byCodeUnit(key(a), key(b)));
}

/** Reads and validates one SKILL.md; a warning instead when it is not a Skill. */
async function readSkill(file: string, source: SkillSourceRoot, files: SkillFileSystem | undefined): Promise<LocalSkill | SkillInvalid> {
  const read = await (files ?? diskSkillFiles).readText(file, MAX_SKILL_FILE_BYTES);
  if (read._tag !== "Text") {
    const detail = read._tag === "Absent" ? "it is a broken symbolic link" : read.detail;
    return { _tag: "SkillInvalid", file, message: `Skipped Skill ${file}: ${detail}.` };
  }
  const parsed = parseSkillFile(read.text);
  if (parsed._tag === "SkillMalformed") return { _tag: "SkillInvalid", file, message: `Skipped Skill ${file}: ${parsed.message}.` };
  return {
    id: parsed.id,
    displayName: parsed.id,
    description: parsed.description,
    advertised: parsed.advertised,
    userInvocable: parsed.userInvocable,
    version: parsed.version,
    publicMetadata: parsed.publicMetadata,
    file,
    directory: dirname(file),
    source,
    digest: createHash("sha256").update(read.text).digest("hex"),
    ...(files !== undefined && { files }),
  };
}

/** Discovers the local Skills for `cwd`. Never throws; problems come back as `warnings`. */
export async function discoverSkills(options: DiscoverSkillsOptions): Promise<SkillDiscovery> {
  const scan: Scan = { files: options.files ?? diskSkillFiles, seen: new Set(), warnings: [], directoriesLeft: MAX_SKILL_SCAN_DIRECTORIES };
  const skills = new Map<string, LocalSkill>();
  for (const root of options.roots ?? skillSourceRoots(options)) {
    // Sequential on purpose: the order of files is the order of precedence.
    for (const file of await scanRoot(root, scan)) {
      const skill = await readSkill(file, root, options.files);
      if ("_tag" in skill) {
        scan.warnings.push(skill);
        continue;
      }
      const earlier = skills.get(skill.id);
      if (earlier !== undefined) {
        scan.warnings.push({
          _tag: "SkillDuplicate",
          id: skill.id,
          file,
          replaced: earlier.file,
          message: `Skill ${JSON.stringify(skill.id)} from ${file} replaces the one from ${earlier.file}.`,
        });
      }
      skills.set(skill.id, skill);
    }
  }
  return { skills: [...skills.values()].sort((a, b) => byCodeUnit(a.id, b.id)), warnings: scan.warnings };
}

/** A Skill's safe catalog entry, exactly the contract's `SkillListEntry`. */
export function skillCatalogEntry(skill: LocalSkill, origin: CatalogOrigin): SkillListEntry {
  return {
    id: skill.id,
    displayName: skill.displayName,
    description: skill.description,
    advertised: skill.advertised,
    userInvocable: skill.userInvocable,
    origin,
  };
}
