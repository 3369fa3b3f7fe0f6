// Skills from the Worker's `/workspace` store: Node's discovery and loader (services/workspace/
// skills.ts, skill-load.ts) over the store through their `SkillFileSystem` seam, so the `skill`
// tool lists and loads them with Node's shapes, limits, precedence and warnings.
//
// Roots: Node's project directories (`PROJECT_SKILL_DIRECTORIES`: .codex/skills, .claude/skills,
// .agents/skills, .opencode/skill, .opencode/skills, .ze-harness/skills) at each level from the
// project root down to the Session workdir. The project root is the nearest ancestor of the
// workdir (inside `/workspace`) holding `.git`, as on Node; where there is none it is `/workspace`
// itself — the server's one Computer Workspace is its project (Node stops at the workdir outside a
// repository because above it lies the rest of a machine; here nothing lies above `/workspace`).
// There is no home directory or configuration file, so no global or `skills` roots.
//
// Discovery runs afresh for every Turn (the store changes while the object lives): a SKILL.md a
// Turn writes is offered from the next Turn on, as Node's runtime reload would.
import { parseDocument } from "yaml";
import { isWorkspaceFileError } from "../plugin/index.js";
import { useYamlParser } from "../services/workspace/frontmatter.js";
import { discoverSkills, projectLevels, projectSkillRoots, type SkillDirent, type SkillDiscovery, type SkillFileStat, type SkillFileSystem } from "../services/workspace/skills.js";
import { decodeUtf8, type WorkspaceFileStore } from "./files/store.js";
import { isInside, parentOf, workspacePath } from "./files/paths.js";
import { WORKSPACE_ROOT } from "./workspace.js";

// workerd has no node_modules to require `yaml` from at run time: the bundle carries it.
useYamlParser(parseDocument);

const missing = (code: "ENOENT" | "ENOTDIR"): Error => Object.assign(new Error(code), { code });

/** The store's canonical path for `path`, or undefined outside `/workspace` (nothing there). */
function canonical(path: string): string | undefined {
  try {
    return workspacePath(path);
  } catch (error) {
    if (isWorkspaceFileError(error)) return undefined;
    throw error;
  }
}

/** The `/workspace` store as Skill discovery's file system (no symbolic links exist there). */
export function storeSkillFiles(store: WorkspaceFileStore): SkillFileSystem {
  const entry = (path: string) => {
    const at = canonical(path);
    return at === undefined ? undefined : store.stat(at);
  };
  return {
    async readdir(path) {
      const found = entry(path);
      if (found === undefined) throw missing("ENOENT");
      if (found.kind !== "directory") throw missing("ENOTDIR");
      return store.list(found.path).map((child): SkillDirent => ({ name: child.name, isDirectory: () => child.kind === "directory", isSymbolicLink: () => false }));
    },
    async stat(path) {
      const found = entry(path);
      if (found === undefined) throw missing("ENOENT");
      return { size: found.size, isFile: () => found.kind === "file", isDirectory: () => found.kind === "directory" } satisfies SkillFileStat;
    },
    async realpath(path) {
      const found = entry(path);
      if (found === undefined) throw missing("ENOENT");
      return found.path;
    },
    async readText(path, maxBytes) {
      const found = entry(path);
      if (found === undefined) return { _tag: "Absent" };
      if (found.kind !== "file") return { _tag: "Failed", reason: "unreadable", detail: "it is a directory" };
      if (found.size > maxBytes) return { _tag: "Failed", reason: "oversized", detail: `it is larger than ${maxBytes} bytes` };
      let text: string;
      try {
        text = decodeUtf8(store.readBytes(found.path, maxBytes));
      } catch (error) {
        if (isWorkspaceFileError(error) && error.code === "invalid_utf8") return { _tag: "Failed", reason: "not_utf8", detail: "it is not UTF-8 text" };
        return { _tag: "Failed", reason: "unreadable", detail: "it cannot be read" };
      }
      // As Node's decoder: a leading byte-order mark is not content.
      if (text.startsWith("\uFEFF")) text = text.slice(1);
      return { _tag: "Text", text, bytes: found.size };
    },
  };
}

/** The project root for `workdir`: the nearest ancestor inside `/workspace` holding `.git`, else `/workspace`. */
export function workspaceProjectRoot(store: WorkspaceFileStore, workdir: string): string {
  for (let directory = workdir; isInside(WORKSPACE_ROOT, directory); directory = parentOf(directory)) {
    if (store.stat(`${directory}/.git`) !== undefined) return directory;
  }
  return WORKSPACE_ROOT;
}

/** The Skills a Turn in `workdir` (inside `/workspace`) may load, discovered in the store now. */
export function workspaceSkills(store: WorkspaceFileStore): (workdir: string) => Promise<SkillDiscovery> {
  const files = storeSkillFiles(store);
  return async (workdir) => {
    const cwd = workspacePath(workdir);
    const roots = projectSkillRoots(projectLevels(cwd, workspaceProjectRoot(store, cwd)));
    return discoverSkills({ cwd, env: {}, files, roots });
  };
}
