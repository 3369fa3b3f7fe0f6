import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseFrontmatter } from "../../services/workspace/frontmatter.js";
import {
  MAX_SKILL_DESCRIPTION_CHARS,
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_MANIFEST_ENTRIES,
  discoverSkills,
  loadSkill,
  renderLoadedSkill,
  skillCatalogEntry,
  skillSourceRoots,
  type LocalSkill,
  type LoadedSkill,
  type SkillDiscovery,
} from "../../services/workspace/skills.js";
import { withoutRootPrivileges } from "../support/other-user.js";
import { skillMd, tree, type Tree } from "./fs-tree.js";

let t: Tree;
beforeEach(() => {
  t = tree();
});
afterEach(() => t.dispose());

const discover = (configSkills?: readonly string[], cwd = t.cwd): Promise<SkillDiscovery> => discoverSkills({ cwd, env: t.env, configSkills });
const ids = (found: SkillDiscovery): string[] => found.skills.map((skill) => skill.id);
const byId = (found: SkillDiscovery, id: string): LocalSkill => {
  const skill = found.skills.find((s) => s.id === id);
  if (skill === undefined) throw new Error(`no Skill ${id}; got ${ids(found).join(", ")}`);
  return skill;
};
const tags = (found: SkillDiscovery): string[] => found.warnings.map((w) => w._tag);

async function loaded(skill: LocalSkill): Promise<LoadedSkill> {
  const result = await loadSkill(skill);
  if (result._tag !== "LoadedSkill") throw new Error(result.message);
  return result;
}

describe("frontmatter", () => {
  it("splits a mapping from the body, with CRLF line endings", () => {
    expect(parseFrontmatter("---\r\nname: a\r\n---\r\nbody\r\nmore")).toEqual({ _tag: "Frontmatter", data: { name: "a" }, body: "body\nmore" });
    expect(parseFrontmatter("---\n---\nbody")).toEqual({ _tag: "Frontmatter", data: {}, body: "body" });
  });

  it("reports a missing block, a missing closing line, bad YAML, duplicate keys and non-mappings", () => {
    expect(parseFrontmatter("# title\n---\nname: a\n---\n")._tag).toBe("FrontmatterMissing");
    expect(parseFrontmatter("---\nname: a\n")).toEqual({ _tag: "FrontmatterInvalid", message: "the frontmatter has no closing --- line" });
    const colon = parseFrontmatter("---\nname: a\ndescription: Skill: b\n---\n");
    expect(colon._tag).toBe("FrontmatterInvalid");
    expect(colon._tag === "FrontmatterInvalid" && colon.message).toMatch(/^invalid YAML frontmatter: .*line 2/);
    expect(parseFrontmatter("---\nname: a\nname: b\n---\n")._tag).toBe("FrontmatterInvalid");
    expect(parseFrontmatter("---\n- a\n---\n")).toEqual({ _tag: "FrontmatterInvalid", message: "the frontmatter is not a YAML mapping" });
  });
});

describe("discoverSkills: locations", () => {
  it("lists the source roots in the documented order", () => {
    const levels = [t.repo, join(t.repo, "packages"), t.cwd];
    const project = levels.flatMap((level) =>
      [".codex/skills", ".claude/skills", ".agents/skills", ".opencode/skill", ".opencode/skills", ".ze-harness/skills"].map((sub) => ({ scope: "project", directory: join(level, sub) })),
    );
    expect(skillSourceRoots({ cwd: t.cwd, env: t.env, configSkills: ["./team", "~/shared", "~", t.path("abs")] })).toEqual([
      { scope: "global", directory: join(t.home, ".codex/skills") },
      { scope: "global", directory: join(t.home, ".claude/skills") },
      { scope: "global", directory: join(t.home, ".agents/skills") },
      { scope: "global", directory: join(t.xdg, "opencode/skill") },
      { scope: "global", directory: join(t.xdg, "opencode/skills") },
      { scope: "global", directory: join(t.home, ".ze-harness/skills") },
      ...project,
      { scope: "config", directory: join(t.cwd, "team") },
      { scope: "config", directory: join(t.home, "shared") },
      { scope: "config", directory: t.home },
      { scope: "config", directory: t.path("abs") },
    ]);
  });

  it("finds a Skill in every standard location and in configured directories", async () => {
    const places: [string, string, string][] = [
      ["g-codex", "home/.codex/skills", "global"],
      ["g-claude", "home/.claude/skills", "global"],
      ["g-agents", "home/.agents/skills", "global"],
      ["g-opencode-skill", "xdg/opencode/skill", "global"],
      ["g-opencode-skills", "xdg/opencode/skills", "global"],
      ["g-ze", "home/.ze-harness/skills", "global"],
      ["p-codex", "repo/packages/app/.codex/skills", "project"],
      ["p-claude", "repo/.claude/skills", "project"],
      ["p-agents", "repo/packages/.agents/skills", "project"],
      ["p-opencode-skill", "repo/packages/app/.opencode/skill", "project"],
      ["p-opencode-skills", "repo/.opencode/skills", "project"],
      ["p-ze", "repo/packages/app/.ze-harness/skills", "project"],
      ["c-relative", "repo/packages/app/team-skills", "config"],
      ["c-home", "home/shared/skills", "config"],
    ];
    for (const [name, dir] of places) t.write(`${dir}/${name}/SKILL.md`, skillMd(name, `The ${name} Skill`));
    const found = await discover(["./team-skills", "~/shared/skills"]);
    expect(found.warnings).toEqual([]);
    expect(ids(found)).toEqual(places.map(([name]) => name).sort());
    for (const [name, dir, scope] of places) {
      const skill = byId(found, name);
      expect(skill.source.scope).toBe(scope);
      expect(skill.file).toBe(t.path(`${dir}/${name}/SKILL.md`));
      expect(skill.directory).toBe(t.path(`${dir}/${name}`));
      expect(skill.description).toBe(`The ${name} Skill`);
    }
  });

  it("uses ~/.config/opencode when XDG_CONFIG_HOME is unset or relative", async () => {
    t.write("home/.config/opencode/skills/dflt/SKILL.md", skillMd("dflt", "default XDG"));
    t.write("xdg/opencode/skills/xdg/SKILL.md", skillMd("xdg", "explicit XDG"));
    expect(ids(await discoverSkills({ cwd: t.cwd, env: { HOME: t.home } }))).toEqual(["dflt"]);
    expect(ids(await discoverSkills({ cwd: t.cwd, env: { HOME: t.home, XDG_CONFIG_HOME: "relative/dir" } }))).toEqual(["dflt"]);
    expect(ids(await discover())).toEqual(["xdg"]);
  });

  it("searches project levels from the repository root down to the working directory only", async () => {
    t.write(".claude/skills/above-repo/SKILL.md", skillMd("above-repo", "outside the repository"));
    t.write("repo/packages/app/deeper/.claude/skills/below-cwd/SKILL.md", skillMd("below-cwd", "below the working directory"));
    t.write("repo/.agents/skills/at-root/SKILL.md", skillMd("at-root", "repository root"));
    expect(ids(await discover())).toEqual(["at-root"]);
  });

  it("outside a repository searches only the working directory", async () => {
    t.write("plain/.agents/skills/parent/SKILL.md", skillMd("parent", "a parent level"));
    t.write("plain/dir/.agents/skills/here/SKILL.md", skillMd("here", "the working directory"));
    expect(ids(await discover(undefined, t.path("plain/dir")))).toEqual(["here"]);
  });

  it("searches recursively, accepts a SKILL.md at a root, and skips .git and node_modules", async () => {
    t.write("home/.ze-harness/skills/SKILL.md", skillMd("at-root", "directly in the root"));
    t.write("home/.ze-harness/skills/group/team/deep/SKILL.md", skillMd("deep", "three levels down"));
    t.write("home/.ze-harness/skills/group/SKILL.md", skillMd("group", "a Skill holding another"));
    t.write("home/.ze-harness/skills/node_modules/pkg/SKILL.md", skillMd("vendored", "inside node_modules"));
    t.write("home/.ze-harness/skills/.git/x/SKILL.md", skillMd("in-git", "inside .git"));
    t.write("home/.ze-harness/skills/notes/skill.md", skillMd("lowercase", "wrong file name"));
    expect(ids(await discover())).toEqual(["at-root", "deep", "group"]);
  });
});

describe("discoverSkills: order and replacement", () => {
  it("later sources replace earlier ones, each replacement warned, in source order", async () => {
    const chain = ["home/.codex/skills", "home/.claude/skills", "home/.ze-harness/skills", "repo/.ze-harness/skills", "repo/packages/app/.claude/skills", "extra"];
    chain.forEach((dir, i) => t.write(`${dir}/dup/SKILL.md`, skillMd("dup", `version ${i}`)));
    const found = await discover(["../../../extra"]);
    expect(byId(found, "dup").description).toBe("version 5");
    expect(byId(found, "dup").source).toEqual({ scope: "config", directory: t.path("extra") });
    expect(found.warnings).toEqual(
      chain.slice(1).map((dir, i) => ({
        _tag: "SkillDuplicate",
        id: "dup",
        file: t.path(`${dir}/dup/SKILL.md`),
        replaced: t.path(`${chain[i]}/dup/SKILL.md`),
        message: `Skill "dup" from ${t.path(`${dir}/dup/SKILL.md`)} replaces the one from ${t.path(`${chain[i]}/dup/SKILL.md`)}.`,
      })),
    );
  });

  it("within one root the later path in lexical order wins", async () => {
    t.write("home/.agents/skills/b/SKILL.md", skillMd("same", "from b"));
    t.write("home/.agents/skills/a/nested/SKILL.md", skillMd("same", "from a/nested"));
    const found = await discover();
    expect(byId(found, "same").description).toBe("from b");
    expect(found.warnings).toMatchObject([{ _tag: "SkillDuplicate", replaced: t.path("home/.agents/skills/a/nested/SKILL.md") }]);
  });

  it("returns Skills sorted by ID", async () => {
    for (const name of ["zeta", "alpha", "mid"]) t.write(`repo/.agents/skills/${name}/SKILL.md`, skillMd(name, name));
    expect(ids(await discover())).toEqual(["alpha", "mid", "zeta"]);
  });
});

describe("discoverSkills: file rules", () => {
  it("skips malformed files with a warning and keeps the valid ones", async () => {
    const dir = "home/.ze-harness/skills";
    t.write(`${dir}/good/SKILL.md`, skillMd("good", "still here"));
    const bad: Record<string, string | Buffer> = {
      "no-frontmatter": "# Just Markdown\n",
      unclosed: "---\nname: unclosed\ndescription: x\n",
      "bad-yaml": "---\nname: bad-yaml\ndescription: Skill: colon\n---\n",
      "dup-key": "---\nname: dup-key\nname: again\ndescription: x\n---\n",
      "no-name": "---\ndescription: x\n---\n",
      "number-description": "---\nname: number-description\ndescription: 42\n---\n",
      "bad-id": skillMd("Bad Name", "not an ID"),
      "empty-description": "---\nname: empty-description\ndescription: '   '\n---\n",
      "long-description": skillMd("long-description", "x".repeat(MAX_SKILL_DESCRIPTION_CHARS + 1)),
      "bad-flag": skillMd("bad-flag", "flag", "body", "user-invocable: maybe\n"),
      "not-utf8": Buffer.concat([Buffer.from(skillMd("not-utf8", "bytes")), Buffer.from([0xff, 0xfe])]),
      oversized: skillMd("oversized", "big", "y".repeat(MAX_SKILL_FILE_BYTES)),
    };
    for (const [name, content] of Object.entries(bad)) t.write(`${dir}/${name}/SKILL.md`, content);
    const found = await discover();
    expect(ids(found)).toEqual(["good"]);
    expect(tags(found)).toEqual(Object.keys(bad).map(() => "SkillInvalid"));
    const messages = new Map(found.warnings.map((w) => [w._tag === "SkillInvalid" ? w.file : "", w.message]));
    const message = (name: string): string => messages.get(t.path(`${dir}/${name}/SKILL.md`)) ?? "(no warning)";
    expect(message("no-frontmatter")).toContain("no YAML frontmatter");
    expect(message("unclosed")).toContain("no closing ---");
    expect(message("bad-yaml")).toContain("invalid YAML frontmatter");
    expect(message("dup-key")).toContain("unique");
    expect(message("no-name")).toContain("no string `name`");
    expect(message("number-description")).toContain("no string `description`");
    expect(message("bad-id")).toContain('"Bad Name" is not a Skill ID');
    expect(message("empty-description")).toContain("`description` is empty");
    expect(message("long-description")).toContain(`longer than ${MAX_SKILL_DESCRIPTION_CHARS}`);
    expect(message("bad-flag")).toContain("`user-invocable` must be true or false");
    expect(message("not-utf8")).toContain("not UTF-8");
    expect(message("oversized")).toContain(`larger than ${MAX_SKILL_FILE_BYTES} bytes`);
    expect(message("oversized")).toMatch(/^Skipped Skill \/.*oversized\/SKILL\.md: /);
  });

  it("accepts block descriptions as one line, and nested metadata", async () => {
    t.write(
      "repo/.agents/skills/blocky/SKILL.md",
      "---\nname: blocky\ndescription: |\n  Use this when\n  the task is   blocky.\nmetadata:\n  author: Ada\n  internal:\n    owner: team-a\n    level: 3\nlicense: MIT\ntags: [computer-use, Bad Tag]\nversion: 2.1.0\n---\nBody.\n",
    );
    t.write("repo/.agents/skills/folded/SKILL.md", "---\nname: folded\ndescription: >-\n  Folded\n  text\n---\n");
    const found = await discover();
    expect(found.warnings).toEqual([]);
    const blocky = byId(found, "blocky");
    expect(blocky.description).toBe("Use this when the task is blocky.");
    expect(blocky.publicMetadata).toEqual({ author: "Ada", license: "MIT", tags: ["computer-use"] });
    expect(blocky.version).toBe("2.1.0");
    expect(byId(found, "folded").description).toBe("Folded text");
    expect(byId(found, "folded").version).toBe("1");
  });

  it("reads advertised and user-invocable from the frontmatter or its metadata, defaulting to true", async () => {
    const dir = "home/.claude/skills";
    t.write(`${dir}/plain/SKILL.md`, skillMd("plain", "defaults"));
    t.write(`${dir}/quiet/SKILL.md`, skillMd("quiet", "unadvertised", "b", "advertised: false\n"));
    t.write(`${dir}/meta/SKILL.md`, skillMd("meta", "metadata strings", "b", 'metadata:\n  user-invocable: "false"\n'));
    t.write(`${dir}/claude/SKILL.md`, skillMd("claude", "Claude Code flag", "b", "disable-model-invocation: true\n"));
    const found = await discover();
    const flags = (id: string): [boolean, boolean] => [byId(found, id).advertised, byId(found, id).userInvocable];
    expect(flags("plain")).toEqual([true, true]);
    expect(flags("quiet")).toEqual([false, true]);
    expect(flags("meta")).toEqual([true, false]);
    expect(flags("claude")).toEqual([false, true]);
  });

  it("catalog entries carry exactly the contract's safe fields", async () => {
    t.write("repo/.agents/skills/safe/SKILL.md", skillMd("safe", "Safe one", "SECRET BODY", "metadata:\n  token: hidden\nadvertised: false\n"));
    const [skill] = (await discover()).skills;
    expect(skillCatalogEntry(skill!, "host")).toStrictEqual({
      id: "safe",
      displayName: "safe",
      description: "Safe one",
      advertised: false,
      userInvocable: true,
      origin: "host",
    });
    expect(JSON.stringify(skill)).not.toContain("SECRET BODY");
    expect(skill!.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("discoverSkills: symlinks and directories", () => {
  it("follows symlinked Skill directories and roots", async () => {
    t.write("store/linked/SKILL.md", skillMd("linked", "through a link"));
    t.write("store2/rooted/SKILL.md", skillMd("rooted", "in a linked root"));
    t.link("home/.agents/skills/linked", t.path("store/linked"));
    t.link("repo/.claude", t.path("store2-parent"));
    t.mkdir("store2-parent");
    t.link("store2-parent/skills", t.path("store2"));
    const found = await discover();
    expect(ids(found)).toEqual(["linked", "rooted"]);
    expect(byId(found, "linked").file).toBe(t.path("home/.agents/skills/linked/SKILL.md"));
  });

  it("skips directory cycles and reports each file once", async () => {
    t.write("home/.ze-harness/skills/loop/SKILL.md", skillMd("loop", "has a cycle below"));
    t.link("home/.ze-harness/skills/loop/again", "..");
    t.link("home/.ze-harness/skills/loop/self", ".");
    const found = await discover();
    expect(ids(found)).toEqual(["loop"]);
    expect(found.warnings).toEqual([]);
  });

  it("a project root linked to a global one is not scanned twice", async () => {
    t.write("home/.agents/skills/shared/SKILL.md", skillMd("shared", "one place"));
    t.link("repo/.agents", t.path("home/.agents"));
    const found = await discover();
    expect(ids(found)).toEqual(["shared"]);
    expect(found.warnings).toEqual([]);
    expect(byId(found, "shared").source.scope).toBe("global");
  });

  it("warns about a broken SKILL.md link and a missing configured directory, not a missing standard one", async () => {
    t.link("home/.agents/skills/broken/SKILL.md", t.path("nowhere/SKILL.md"));
    t.write("home/.agents/skills/fine/SKILL.md", skillMd("fine", "fine"));
    const found = await discover(["./missing-skills"]);
    expect(ids(found)).toEqual(["fine"]);
    expect(found.warnings).toEqual([
      { _tag: "SkillInvalid", file: t.path("home/.agents/skills/broken/SKILL.md"), message: `Skipped Skill ${t.path("home/.agents/skills/broken/SKILL.md")}: it is a broken symbolic link.` },
      {
        _tag: "SkillDirectoryUnreadable",
        directory: join(t.cwd, "missing-skills"),
        message: `Cannot search ${join(t.cwd, "missing-skills")} for Skills: it does not exist.`,
      },
    ]);
  });

  it("warns about a configured root that is a file, but not a standard one", async () => {
    t.write("repo/packages/app/.agents/skills", "a file, not a directory");
    const file = t.write("not-a-dir", "x");
    expect((await discover([file])).warnings).toEqual([
      { _tag: "SkillDirectoryUnreadable", directory: file, message: `Cannot search ${file} for Skills: it is not a directory.` },
    ]);
  });

  it("warns about an unreadable directory (as root: with the effective user switched to nobody)", async () => {
    t.write("home/.agents/skills/locked/x/SKILL.md", skillMd("locked", "locked"));
    chmodSync(t.path("home/.agents/skills/locked"), 0o000);
    try {
      expect(tags(await withoutRootPrivileges(t.root, () => discover()))).toEqual(["SkillDirectoryUnreadable"]);
    } finally {
      chmodSync(t.path("home/.agents/skills/locked"), 0o755);
    }
  });
});

describe("loadSkill", () => {
  const dir = "repo/.ze-harness/skills/tool";

  it("returns the body and the supporting files with sizes, never their contents", async () => {
    t.write(`${dir}/SKILL.md`, skillMd("tool", "A tool", "# Use the tool\n\nRun scripts/run.sh."));
    t.write(`${dir}/scripts/run.sh`, "echo hi\n");
    t.write(`${dir}/reference.md`, "0123456789");
    t.write(`${dir}/.hidden`, "secret");
    t.write(`${dir}/child/SKILL.md`, skillMd("child", "another Skill"));
    t.write(`${dir}/child/own.txt`, "the child's file");
    t.write("outside/linked.txt", "abc");
    t.link(`${dir}/linked.txt`, t.path("outside/linked.txt"));
    t.link(`${dir}/scripts/loop`, "..");
    const found = await discover();
    const result = await loaded(byId(found, "tool"));
    expect(result.body).toBe("# Use the tool\n\nRun scripts/run.sh.");
    expect(result.files).toEqual([
      { path: "linked.txt", bytes: 3 },
      { path: "reference.md", bytes: 10 },
      { path: "scripts/run.sh", bytes: 8 },
    ]);
    expect(result.filesTruncated).toBe(false);
    const text = renderLoadedSkill(result);
    expect(text).toContain("# Use the tool\n\nRun scripts/run.sh.");
    expect(text).toContain(`Base directory of this Skill: ${t.path(dir)}`);
    expect(text).toContain("- scripts/run.sh (8 bytes)");
    expect(text).not.toContain("echo hi");
    expect(text).not.toContain("the child's file");
    const child = await loaded(byId(found, "child"));
    expect(child.files).toEqual([{ path: "own.txt", bytes: 16 }]);
  });

  it(`lists at most ${MAX_SKILL_MANIFEST_ENTRIES} files and says more exist`, async () => {
    t.write(`${dir}/SKILL.md`, skillMd("tool", "many files"));
    for (let i = 0; i < MAX_SKILL_MANIFEST_ENTRIES + 5; i++) t.write(`${dir}/files/f${String(i).padStart(3, "0")}.txt`, "x");
    const result = await loaded(byId(await discover(), "tool"));
    expect(result.files).toHaveLength(MAX_SKILL_MANIFEST_ENTRIES);
    expect(result.files[0]).toEqual({ path: "files/f000.txt", bytes: 1 });
    expect(result.filesTruncated).toBe(true);
    expect(renderLoadedSkill(result)).toContain(`only the first ${MAX_SKILL_MANIFEST_ENTRIES} are shown`);
  });

  it("exactly the limit is not truncated; an empty Skill says it has no files", async () => {
    t.write(`${dir}/SKILL.md`, skillMd("tool", "exact", ""));
    const empty = await loaded(byId(await discover(), "tool"));
    expect(empty.files).toEqual([]);
    expect(renderLoadedSkill(empty)).toContain("Supporting files:\n- (none)");
    expect(renderLoadedSkill(empty)).toContain("no instructions beyond its description");
    for (let i = 0; i < MAX_SKILL_MANIFEST_ENTRIES; i++) t.write(`${dir}/f${String(i).padStart(3, "0")}`, "");
    const full = await loaded(byId(await discover(), "tool"));
    expect(full.files).toHaveLength(MAX_SKILL_MANIFEST_ENTRIES);
    expect(full.filesTruncated).toBe(false);
  });

  it("re-reads the body, and fails as a value when the file changed identity or vanished", async () => {
    const file = t.write(`${dir}/SKILL.md`, skillMd("tool", "v1", "first body"));
    const skill = byId(await discover(), "tool");
    writeFileSync(file, skillMd("tool", "v2", "second body"));
    expect((await loaded(skill)).body).toBe("second body");
    writeFileSync(file, skillMd("renamed", "v3"));
    expect(await loadSkill(skill)).toEqual({
      _tag: "SkillLoadFailed",
      id: "tool",
      file,
      message: `Skill "tool" cannot be loaded from ${file}: the file now declares "renamed".`,
    });
    writeFileSync(file, "no frontmatter");
    expect(await loadSkill(skill)).toMatchObject({ _tag: "SkillLoadFailed", message: expect.stringContaining("no YAML frontmatter") });
    t.dispose();
    expect(await loadSkill(skill)).toMatchObject({ _tag: "SkillLoadFailed", message: expect.stringContaining("no longer exists") });
  });
});
