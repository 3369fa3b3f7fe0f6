// Real git repositories for project-identity tests, made with the git binary.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";

/** `git init` in `dir` (created if needed) and, when given, `git remote add origin <remote>`. */
export function gitRepository(dir: string, env: Record<string, string>, remote?: string): string {
  mkdirSync(dir, { recursive: true });
  const gitEnv = { ...env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
  const git = (...args: string[]): void => {
    execFileSync("git", args, { cwd: dir, env: gitEnv, stdio: ["ignore", "ignore", "pipe"] });
  };
  git("init", "--quiet");
  if (remote !== undefined) git("remote", "add", "origin", remote);
  return dir;
}
