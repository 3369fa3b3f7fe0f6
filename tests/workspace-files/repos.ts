// Real repositories for the workspace observation suites, made with isomorphic-git in temp
// directories (the code under test never runs git; neither do these builders).
import git from "isomorphic-git";
import * as fs from "node:fs";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const author = { name: "Test", email: "test@example.com", timestamp: 1_700_000_000, timezoneOffset: 0 };

export interface TestRepo {
  readonly dir: string;
  write(path: string, content: string | Uint8Array): void;
  remove(path: string): void;
  add(path: string): Promise<void>;
  stageRemove(path: string): Promise<void>;
  commit(message?: string): Promise<string>;
}

export async function initRepo(dir: string): Promise<TestRepo> {
  mkdirSync(dir, { recursive: true });
  await git.init({ fs, dir, defaultBranch: "main" });
  // isomorphic-git's init writes browser-safe defaults; these are git's on Linux.
  for (const [path, value] of [["core.filemode", true], ["core.symlinks", true], ["core.ignorecase", false]] as const) await git.setConfig({ fs, dir, path, value });
  return {
    dir,
    write: (path, content) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    },
    remove: (path) => rmSync(join(dir, path), { recursive: true, force: true }),
    add: (path) => git.add({ fs, dir, filepath: path }),
    stageRemove: (path) => git.remove({ fs, dir, filepath: path }),
    commit: (message = "commit") => git.commit({ fs, dir, message, author }),
  };
}

export const b64 = (text: string | Uint8Array): string => Buffer.from(text).toString("base64");
export const unb64 = (value: string): string => Buffer.from(value, "base64").toString("utf8");
