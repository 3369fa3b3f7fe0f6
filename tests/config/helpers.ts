// Real temporary directories for config tests: a fake home, an XDG config root and a project tree.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface Sandbox {
  readonly root: string;
  readonly home: string;
  readonly xdgConfig: string;
  /** HOME and XDG_CONFIG_HOME inside the sandbox, so the real user's files are never read. */
  readonly env: Record<string, string>;
  /** Writes `content` (JSON-encoded unless a string) at `root/relative`, creating parents. Returns the absolute path. */
  write(relative: string, content: unknown): string;
  dir(relative: string): string;
  dispose(): void;
}

export function sandbox(): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "ze-config-test-")));
  const home = join(root, "home");
  const xdgConfig = join(root, "xdg-config");
  mkdirSync(home, { recursive: true });
  return {
    root,
    home,
    xdgConfig,
    env: { HOME: home, XDG_CONFIG_HOME: xdgConfig },
    write(relative, content) {
      const file = join(root, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
      return file;
    },
    dir(relative) {
      const path = join(root, relative);
      mkdirSync(path, { recursive: true });
      return path;
    },
    dispose() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
