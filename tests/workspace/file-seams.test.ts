// The file-system seams of Skill discovery/loading (`SkillFileSystem`) and of the Markdown agent
// scan (`AgentFileSystem`): given another file system (an in-memory map here; the Worker's
// /workspace store in production), discovery, loading and the agent catalog read only through
// it — the host's disk is never touched — with the same rules as on the disk.
import { describe, expect, it } from "vitest";
import type { AgentFileSystem } from "../../services/workspace/agents.js";
import { loadAgentCatalog } from "../../services/workspace/agents.js";
import { discoverSkills, loadSkill, projectSkillRoots, type SkillFileSystem } from "../../services/workspace/skills.js";

/** An in-memory tree: file paths to contents; directories implied. */
function memory(files: Record<string, string>) {
  const reads: string[] = [];
  const isDirectory = (path: string): boolean => Object.keys(files).some((file) => file.startsWith(`${path}/`));
  const children = (path: string): string[] => [...new Set(Object.keys(files).filter((file) => file.startsWith(`${path}/`)).map((file) => file.slice(path.length + 1).split("/")[0]!))];
  const missing = (): Error => Object.assign(new Error("ENOENT"), { code: "ENOENT" });
  const skills: SkillFileSystem = {
    async readdir(path) {
      if (!isDirectory(path)) throw missing();
      return children(path).map((name) => ({ name, isDirectory: () => isDirectory(`${path}/${name}`), isSymbolicLink: () => false }));
    },
    async stat(path) {
      if (path in files) return { size: Buffer.byteLength(files[path]!), isFile: () => true, isDirectory: () => false };
      if (isDirectory(path)) return { size: 0, isFile: () => false, isDirectory: () => true };
      throw missing();
    },
    async realpath(path) {
      if (path in files || isDirectory(path)) return path;
      throw missing();
    },
    async readText(path, maxBytes) {
      reads.push(path);
      const text = files[path];
      if (text === undefined) return { _tag: "Absent" };
      const bytes = Buffer.byteLength(text);
      return bytes > maxBytes ? { _tag: "Failed", reason: "oversized", detail: `it is larger than ${maxBytes} bytes` } : { _tag: "Text", text, bytes };
    },
  };
  const agents: AgentFileSystem = {
    readdir: (path) => children(path),
    stat: (path) => (path in files ? { isDirectory: () => false, isFile: () => true } : isDirectory(path) ? { isDirectory: () => true, isFile: () => false } : undefined),
    realpath: (path) => (path in files || isDirectory(path) ? path : undefined),
    readText: (path) => {
      reads.push(path);
      if (!(path in files)) throw missing();
      return files[path]!;
    },
  };
  return { skills, agents, reads, files };
}

const skill = (name: string, description: string, body: string): string => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

describe("SkillFileSystem", () => {
  it("discovers and loads Skills only through the given file system and roots", async () => {
    const fs = memory({
      "/w/.ze-harness/skills/tidy/SKILL.md": skill("tidy", "Tidies up", "Put things back."),
      "/w/.ze-harness/skills/tidy/notes/how.md": "12345",
      "/w/app/.claude/skills/tidy/SKILL.md": skill("tidy", "Tidies the app", "Sweep the app."),
      "/w/.agents/skills/bad/SKILL.md": "no frontmatter",
    });
    // `/nonexistent-home` would be read from the disk if the seam leaked; nothing is there either way.
    const found = await discoverSkills({ cwd: "/w/app", env: { HOME: "/nonexistent-home" }, files: fs.skills, roots: projectSkillRoots(["/w", "/w/app"]) });
    expect(found.skills.map((s) => [s.id, s.description, s.file])).toEqual([["tidy", "Tidies the app", "/w/app/.claude/skills/tidy/SKILL.md"]]);
    expect(found.warnings.map((w) => w._tag).sort()).toEqual(["SkillDuplicate", "SkillInvalid"]);
    const loaded = await loadSkill(found.skills[0]!);
    expect(loaded).toMatchObject({ _tag: "LoadedSkill", body: "Sweep the app.", files: [] });
    // The outer one, found alone, lists its supporting file from the same file system.
    const outer = await discoverSkills({ cwd: "/w", env: {}, files: fs.skills, roots: projectSkillRoots(["/w"]) });
    expect(await loadSkill(outer.skills[0]!)).toMatchObject({ _tag: "LoadedSkill", body: "Put things back.", files: [{ path: "notes/how.md", bytes: 5 }] });
    // A later edit applies at the next load; a rename is a typed failure.
    fs.files["/w/.ze-harness/skills/tidy/SKILL.md"] = skill("neat", "Renamed", "x");
    expect(await loadSkill(outer.skills[0]!)).toMatchObject({ _tag: "SkillLoadFailed", id: "tidy" });
    expect(fs.reads.every((path) => path.startsWith("/w/"))).toBe(true);
  });
});

describe("AgentFileSystem", () => {
  it("loads Markdown agents from the given directory and file system, refusing as on the disk", () => {
    const fs = memory({
      "/w/.ze-harness/agents/team/reviewer.md": "---\ndescription: Reviews\nmode: subagent\n---\n\nReview carefully.",
      "/w/.ze-harness/agents/odd.md": "---\na: 1\na: 2\n---\nx",
    });
    const loaded = loadAgentCatalog({ configLayers: [], env: {}, markdown: { directory: "/w/.ze-harness/agents", files: fs.agents } });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.value.get("team/reviewer")).toMatchObject({ system: "Review carefully.", mode: "subagent", origin: "markdown" });
    expect(loaded.value.skipped.map((skip) => [skip.file, skip.reason])).toEqual([["/w/.ze-harness/agents/odd.md", "invalid-frontmatter"]]);
    fs.files["/w/.ze-harness/agents/loud.md"] = "---\nhidden: true\n---\nShout.";
    const refused = loadAgentCatalog({ configLayers: [], env: {}, markdown: { directory: "/w/.ze-harness/agents", files: fs.agents } });
    expect(refused).toMatchObject({ ok: false, error: { _tag: "AgentConfigInvalid", file: "/w/.ze-harness/agents/loud.md", pointer: "/hidden", agent: "loud" } });
  });
});
