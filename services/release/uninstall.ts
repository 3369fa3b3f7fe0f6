// `ze-harness uninstall`: the launcher, the versioned executables and the install record go;
// Sessions (the database), credentials and configuration stay unless `--remove-user-data --yes`,
// which also removes the XDG data, config and cache directories and ~/.ze-harness/skills.
// A symlinked application directory is refused (before anything is removed) rather than deleting
// its target; a running local daemon must be stopped first.
import { existsSync, lstatSync, readdirSync, readlinkSync, rmSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { configDirectory } from "../config/paths.js";
import { daemonStatus } from "../daemon/client.js";
import { installPaths, readRecord, type Env } from "./layout.js";
import { ReleaseError } from "./verify.js";
import { cacheDirectory } from "../providers/catalog-cache.js";

export interface UninstallResult {
  readonly removed: readonly string[];
  readonly kept: readonly string[];
}

const isLink = (path: string): boolean => {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
};

function removeIfEmpty(directory: string): void {
  try {
    if (readdirSync(directory).length === 0) rmdirSync(directory);
  } catch {
    // Absent, or not ours to judge.
  }
}

export async function uninstall(env: Env, options: { readonly removeUserData: boolean }): Promise<UninstallResult> {
  const paths = installPaths(env);
  const record = readRecord(paths);
  if (record === undefined && !existsSync(paths.versions)) {
    throw new ReleaseError("NotInstalled", `no native installation here (${paths.record} is missing); Homebrew: \`brew uninstall ze-harness\`; WinGet: \`winget uninstall --id ZephyrCloudIO.ZeHarness -e\``);
  }
  const home = env["HOME"] ?? "";
  const userData = [paths.data, configDirectory(env), cacheDirectory(env), join(home, ".ze-harness", "skills")];
  for (const directory of options.removeUserData ? userData : [paths.data, paths.versions]) {
    if (isLink(directory)) throw new ReleaseError("UninstallRefused", `${directory} is a symbolic link: remove it yourself (its target is not deleted here); nothing was removed`);
  }
  const daemon = await daemonStatus(env);
  if (daemon.running) throw new ReleaseError("UninstallRefused", `the local daemon (pid ${daemon.pid}) is running: run \`ze-harness service stop\` first; nothing was removed`);

  const removed: string[] = [];
  const launcher = record?.launcher ?? join(home, ".ze-harness", "bin", "ze-harness");
  // Only the installer's own launcher: a symlink into versions/.
  if (isLink(launcher) && readlinkSync(launcher).startsWith(`${paths.versions}/`)) {
    rmSync(launcher);
    removed.push(launcher);
    removeIfEmpty(dirname(launcher));
  }
  for (const path of [paths.versions, paths.record, paths.staged, paths.cert]) {
    if (!existsSync(path)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  if (options.removeUserData) {
    for (const directory of userData) {
      if (!existsSync(directory)) continue;
      rmSync(directory, { recursive: true, force: true });
      removed.push(directory);
    }
  }
  removeIfEmpty(join(home, ".ze-harness"));
  const kept = options.removeUserData ? [] : userData.filter((directory) => existsSync(directory));
  return { removed, kept };
}
