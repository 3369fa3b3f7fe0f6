// A real temporary tree for workspace tests: a fake HOME, an XDG config home, and a repository
// (`repo/.git`) whose nested working directory is `repo/packages/app`.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface Tree {
  readonly root: string;
  readonly home: string;
  readonly xdg: string;
  readonly repo: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Writes `content` at `relative` (to the tree root), creating parents; returns the absolute path. */
  write(relative: string, content: string | Buffer): string;
  mkdir(relative: string): string;
  /** Creates a symlink at `relative` pointing to `target` (absolute or relative to the link). */
  link(relative: string, target: string): string;
  path(relative: string): string;
  dispose(): void;
}

export function tree(): Tree {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "ze-workspace-test-")));
  const path = (relative: string): string => join(root, relative);
  const mkdir = (relative: string): string => {
    mkdirSync(path(relative), { recursive: true });
    return path(relative);
  };
  mkdir("home");
  mkdir("xdg");
  mkdir("repo/.git");
  mkdir("repo/packages/app");
  return {
    root,
    home: path("home"),
    xdg: path("xdg"),
    repo: path("repo"),
    cwd: path("repo/packages/app"),
    env: { HOME: path("home"), XDG_CONFIG_HOME: path("xdg") },
    write(relative, content) {
      mkdirSync(dirname(path(relative)), { recursive: true });
      writeFileSync(path(relative), content);
      return path(relative);
    },
    mkdir,
    link(relative, target) {
      mkdirSync(dirname(path(relative)), { recursive: true });
      symlinkSync(target, path(relative));
      return path(relative);
    },
    path,
    dispose() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A SKILL.md with `name`, `description` and a body, plus extra raw frontmatter lines. */
export function skillMd(name: string, description: string, body = `Instructions for ${name}.`, extra = ""): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${extra}---\n\n${body}\n`;
}
