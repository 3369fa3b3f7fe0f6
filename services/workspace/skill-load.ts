// Loading one discovered Skill: what a Turn that selects it, or the model's `skill` call, gets —
// the Markdown body and a bounded manifest of the supporting files beside it (relative paths and
// sizes, never contents: the model reads what it needs with the ordinary `read` tool, under the
// ordinary permissions).
//
// The SKILL.md is read again here rather than kept from discovery, so catalogs never hold bodies
// and a body edit applies at the next load. If the file no longer declares the same Skill
// (renamed, removed, now malformed) loading fails with a typed value instead of handing the
// model some other text under this ID; a runtime reload picks up the change.
//
// Manifest rules: files below the Skill's directory, depth first with each directory's entries
// in name order (so the walk can stop at the bound); symlinks followed, directories seen before
// (cycles) skipped; hidden entries (`.git`, `.DS_Store`, …) and the SKILL.md itself left out, and
// a subdirectory holding its own SKILL.md left out whole (it is another Skill).
import { join } from "node:path";
import { MAX_SKILL_FILE_BYTES, SKILL_FILE, parseSkillFile } from "./skill-file.js";
import { diskSkillFiles, type SkillDirent, type SkillFileSystem } from "./skill-files.js";
import type { LocalSkill } from "./skills.js";

/** Most supporting files a loaded Skill lists; `filesTruncated` says when there are more. */
export const MAX_SKILL_MANIFEST_ENTRIES = 50;
/** Most directories the manifest walk reads (a Skill directory with a huge tree stays cheap). */
const MAX_MANIFEST_DIRECTORIES = 200;

/** One supporting file: its path relative to the Skill's directory (forward slashes) and size. */
export interface SkillFileEntry {
  readonly path: string;
  readonly bytes: number;
}

export interface LoadedSkill {
  readonly _tag: "LoadedSkill";
  readonly skill: LocalSkill;
  /** The Markdown after the frontmatter, trimmed; may be empty. */
  readonly body: string;
  /** At most MAX_SKILL_MANIFEST_ENTRIES, in walk order. */
  readonly files: readonly SkillFileEntry[];
  /** Whether supporting files exist beyond `files`. */
  readonly filesTruncated: boolean;
}

/** The Skill's file can no longer be loaded as this Skill. */
export interface SkillLoadFailed {
  readonly _tag: "SkillLoadFailed";
  readonly id: string;
  readonly file: string;
  /** One line naming the Skill, the file and the reason. */
  readonly message: string;
}

interface Walk {
  readonly fs: SkillFileSystem;
  readonly files: SkillFileEntry[];
  readonly seen: Set<string>;
  directoriesLeft: number;
  truncated: boolean;
}

async function isFile(fs: SkillFileSystem, path: string): Promise<boolean> {
  return fs.stat(path).then((s) => s.isFile(), () => false);
}

async function walk(dir: string, prefix: string, state: Walk): Promise<void> {
  if (state.directoriesLeft <= 0) {
    state.truncated = true;
    return;
  }
  state.directoriesLeft--;
  let entries: SkillDirent[];
  try {
    entries = [...(await state.fs.readdir(dir))];
  } catch {
    return; // an unreadable subdirectory lists nothing; the Skill still loads
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (state.truncated) return;
    if (entry.name.startsWith(".")) continue;
    if (prefix === "" && entry.name === SKILL_FILE) continue;
    const path = join(dir, entry.name);
    const info = await state.fs.stat(path).catch(() => undefined); // follows symlinks; broken ones drop out
    if (info === undefined) continue;
    if (info.isFile()) {
      if (state.files.length === MAX_SKILL_MANIFEST_ENTRIES) {
        state.truncated = true;
        return;
      }
      state.files.push({ path: `${prefix}${entry.name}`, bytes: info.size });
    } else if (info.isDirectory()) {
      const canonical = await state.fs.realpath(path).catch(() => undefined);
      if (canonical === undefined || state.seen.has(canonical)) continue;
      state.seen.add(canonical);
      if (await isFile(state.fs, join(path, SKILL_FILE))) continue;
      await walk(path, `${prefix}${entry.name}/`, state);
    }
  }
}

/** The supporting files of the Skill in `directory`, bounded. */
export async function skillManifest(directory: string, fs: SkillFileSystem = diskSkillFiles): Promise<{ files: SkillFileEntry[]; truncated: boolean }> {
  const root = await fs.realpath(directory).catch(() => directory);
  const state: Walk = { fs, files: [], seen: new Set([root]), directoriesLeft: MAX_MANIFEST_DIRECTORIES, truncated: false };
  await walk(directory, "", state);
  return { files: state.files, truncated: state.truncated };
}

/** Reads the Skill's body and manifest (from `skill.files`, else the disk). Never throws. */
export async function loadSkill(skill: LocalSkill): Promise<LoadedSkill | SkillLoadFailed> {
  const fs = skill.files ?? diskSkillFiles;
  const failed = (why: string): SkillLoadFailed => ({
    _tag: "SkillLoadFailed",
    id: skill.id,
    file: skill.file,
    message: `Skill ${JSON.stringify(skill.id)} cannot be loaded from ${skill.file}: ${why}.`,
  });
  const read = await fs.readText(skill.file, MAX_SKILL_FILE_BYTES);
  if (read._tag === "Absent") return failed("the file no longer exists");
  if (read._tag === "Failed") return failed(read.detail);
  const parsed = parseSkillFile(read.text);
  if (parsed._tag === "SkillMalformed") return failed(parsed.message);
  if (parsed.id !== skill.id) return failed(`the file now declares ${JSON.stringify(parsed.id)}`);
  const manifest = await skillManifest(skill.directory, fs);
  return { _tag: "LoadedSkill", skill, body: parsed.body, files: manifest.files, filesTruncated: manifest.truncated };
}

/** The loaded Skill as the text the model receives: body, base directory and manifest. */
export function renderLoadedSkill(loaded: LoadedSkill): string {
  const { skill } = loaded;
  const files = loaded.files.map((file) => `- ${file.path} (${file.bytes} bytes)`);
  if (files.length === 0) files.push("- (none)");
  if (loaded.filesTruncated) files.push(`- … more files not listed (only the first ${MAX_SKILL_MANIFEST_ENTRIES} are shown)`);
  return [
    `<skill name="${skill.id}">`,
    `# Skill: ${skill.displayName}`,
    "",
    loaded.body === "" ? "(This Skill has no instructions beyond its description.)" : loaded.body,
    "",
    `Base directory of this Skill: ${skill.directory}`,
    "Relative paths in this Skill resolve against that directory. Read supporting files with the read tool when the instructions call for them.",
    "",
    "Supporting files:",
    ...files,
    "</skill>",
  ].join("\n");
}
