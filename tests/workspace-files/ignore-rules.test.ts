// git's ignore rules as Turn recording applies them (services/workspace/files/ignore-rules.ts),
// on real repositories in temp directories: nested .gitignore files (deeper wins, negations),
// .git/info/exclude, the global excludes file (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore),
// a workdir below the repository root, and the stat-only scan that honours them without reading.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordingRules } from "../../services/workspace/files/ignore-rules.js";
import { ListingCache, statScan } from "../../services/workspace/files/stat-scan.js";
import { initRepo } from "./repos.js";

let dir: string;
let env: Record<string, string>;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "ze-ignore-")));
  env = { HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config") };
  mkdirSync(env.HOME!, { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (path: string, content = "x\n"): void => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
};
const names = async (workdir: string, cache?: ListingCache): Promise<string[]> =>
  (await statScan(workdir, { rules: recordingRules(workdir, env), cache })).map((entry) => Buffer.from(entry[0], "base64").toString("utf8"));

describe("recording rules", () => {
  it("apply every .gitignore on the way, the deeper one winning, and never enter an ignored directory", async () => {
    const repo = join(dir, "repo");
    await initRepo(repo);
    write(join(repo, ".gitignore"), "*.log\nbuild/\nsecret*\n");
    write(join(repo, "sub", ".gitignore"), "!keep.log\nlocal.txt\n");
    for (const file of ["a.txt", "a.log", "build/out.js", "secret.env", "sub/keep.log", "sub/other.log", "sub/local.txt", "sub/code.ts", "node_modules/x/index.js"]) write(join(repo, file));
    expect(await names(repo)).toEqual([".gitignore", "a.txt", "sub/.gitignore", "sub/code.ts", "sub/keep.log"]);
    const rules = recordingRules(repo, env)!;
    expect(rules.ignored("build", true)).toBe(true);
    expect(rules.ignored("sub/other.log", false)).toBe(true);
    expect(rules.ignored("sub/keep.log", false)).toBe(false);
  });

  it("apply .git/info/exclude and the global excludes file, from core.excludesFile or the XDG default", async () => {
    const repo = join(dir, "repo");
    await initRepo(repo);
    write(join(repo, ".git", "info", "exclude"), "excluded.txt\n");
    write(join(env.XDG_CONFIG_HOME!, "git", "ignore"), "*.swp\n");
    for (const file of ["kept.txt", "excluded.txt", "edit.swp", "scratch.tmp"]) write(join(repo, file));
    expect(await names(repo)).toEqual(["kept.txt", "scratch.tmp"]);
    // core.excludesFile in ~/.gitconfig replaces the XDG default.
    write(join(env.HOME!, ".gitconfig"), "[core]\n\texcludesFile = ~/my-ignores\n");
    write(join(env.HOME!, "my-ignores"), "*.tmp\n");
    expect(await names(repo)).toEqual(["edit.swp", "kept.txt"]);
  });

  it("a workdir below the repository root matches patterns from the root", async () => {
    const repo = join(dir, "repo");
    await initRepo(repo);
    write(join(repo, ".gitignore"), "/pkg/dist/\n*.o\n");
    for (const file of ["pkg/src/a.c", "pkg/src/a.o", "pkg/dist/a.js", "pkg/README"]) write(join(repo, file));
    expect(await names(join(repo, "pkg"))).toEqual(["README", "src/a.c"]);
    expect(recordingRules(join(repo, "pkg"), env)?.prefix).toBe("pkg");
  });

  it("outside a repository there are no rules", () => {
    expect(recordingRules(dir, env)).toBeUndefined();
  });

  it("a cached listing is read again when a .gitignore changes or a file appears", async () => {
    const repo = join(dir, "repo");
    await initRepo(repo);
    write(join(repo, "sub", "a.txt"));
    write(join(repo, "sub", "b.txt"));
    const cache = new ListingCache();
    expect(await names(repo, cache)).toEqual(["sub/a.txt", "sub/b.txt"]);
    write(join(repo, "sub", ".gitignore"), "b.txt\n");
    expect(await names(repo, cache)).toEqual(["sub/.gitignore", "sub/a.txt"]);
    write(join(repo, ".gitignore"), "a.txt\n");
    expect(await names(repo, cache)).toEqual([".gitignore", "sub/.gitignore"]);
    write(join(repo, "sub", "c.txt"));
    expect(await names(repo, cache)).toEqual([".gitignore", "sub/.gitignore", "sub/c.txt"]);
    // Edited in place (the directory itself unchanged): still read again.
    writeFileSync(join(repo, "sub", ".gitignore"), "c.txt\n");
    expect(await names(repo, cache)).toEqual([".gitignore", "sub/.gitignore", "sub/b.txt"]);
  });
});
