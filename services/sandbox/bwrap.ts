// The bubblewrap command line of one sandboxed command (a pure function of its plan), finding the
// binary, and the probe that tells whether bubblewrap can run here at all.
//
// The file system, in mount order (bwrap applies them in argument order; a later mount on a
// deeper path wins, so mounts are sorted by depth and, at equal depth, hidden last):
//   --ro-bind / /           everything read-only (sources always name the host's paths)
//   --dev /dev, --proc /proc  fresh device and process file systems (a new PID namespace)
//   --tmpfs <temp>          a private, empty /tmp (and $TMPDIR, /var/tmp): nothing of other processes
//   --bind <cwd> <cwd>      workspace-write: the working directory writable (read-only: re-bound read-only,
//                           so a workdir under /tmp stays visible)
//   --ro-bind <p> <p>       protected paths inside the writable workdir (its project config file, .git/hooks, .git/config)
//   --tmpfs <dir> / --ro-bind <empty> <file>   hidden paths (hidden.ts)
// Namespaces: user (mapped to the caller's uid; no further user namespaces inside), PID, IPC,
// UTS, cgroup, and network unless the policy keeps the host's. All capabilities are dropped.
// Not `--new-session`: the command must stay in the process group the host signals (timeouts,
// cancellation, terminal close); it has no controlling terminal but its own PTY, so TIOCSTI
// reaches nothing else. `--die-with-parent`: the tree dies with the host.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join, sep } from "node:path";
import { SandboxUnavailable } from "./errors.js";
import type { HiddenPath } from "./hidden.js";
import type { SandboxMode } from "./policy.js";

/** Where the proxy's socket appears inside the sandbox (in its private /tmp). */
export const PROXY_SOCKET_INSIDE = "/tmp/.ze-harness-proxy.sock";

export interface BwrapPlan {
  readonly mode: SandboxMode;
  /** The command's working directory (absolute, canonical): writable in workspace-write. */
  readonly cwd: string;
  /** Directories that become private, empty tmpfs mounts. */
  readonly privateTemps: readonly string[];
  /** Existing paths inside the writable cwd that stay read-only. */
  readonly protectedPaths: readonly string[];
  readonly hidden: readonly HiddenPath[];
  /** An empty, read-only regular file of the host's, bound over hidden files. */
  readonly emptyFile: string;
  /** Keep the host's network namespace (network: true). */
  readonly shareNetwork: boolean;
  /** The filtering proxy's socket on the host, bound to PROXY_SOCKET_INSIDE. */
  readonly proxySocket?: string | undefined;
}

const depth = (path: string): number => (path === sep ? 0 : path.split(sep).filter(Boolean).length);
const within = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

interface Mount {
  readonly path: string;
  /** Tie-break at equal depth: temps, then the workdir, then protected, then hidden (hidden wins). */
  readonly rank: number;
  readonly args: readonly string[];
}

/** bwrap's arguments for `plan`, ending in `-- argv…`. */
export function bwrapArguments(plan: BwrapPlan, argv: readonly string[]): string[] {
  const mounts: Mount[] = [];
  for (const temp of plan.privateTemps) mounts.push({ path: temp, rank: 0, args: ["--tmpfs", temp] });
  mounts.push({ path: plan.cwd, rank: 1, args: [plan.mode === "workspace-write" ? "--bind" : "--ro-bind", plan.cwd, plan.cwd] });
  if (plan.mode === "workspace-write") {
    for (const path of plan.protectedPaths) if (within(path, plan.cwd)) mounts.push({ path, rank: 2, args: ["--ro-bind", path, path] });
  }
  if (plan.proxySocket !== undefined) mounts.push({ path: PROXY_SOCKET_INSIDE, rank: 2, args: ["--ro-bind", plan.proxySocket, PROXY_SOCKET_INSIDE] });
  for (const hidden of plan.hidden) {
    // Under a private temp and outside the workdir, or in another hidden directory, an empty tmpfs already hides it.
    if (!within(hidden.path, plan.cwd) && plan.privateTemps.some((temp) => within(hidden.path, temp))) continue;
    if (plan.hidden.some((other) => other !== hidden && other.kind === "directory" && other.path !== hidden.path && within(hidden.path, other.path))) continue;
    mounts.push({ path: hidden.path, rank: 3, args: hidden.kind === "directory" ? ["--tmpfs", hidden.path] : ["--ro-bind", plan.emptyFile, hidden.path] });
  }
  // Stable: equal depth and rank keep their order.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  return [
    "--die-with-parent",
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(plan.shareNetwork ? [] : ["--unshare-net"]),
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    ...mounts.flatMap((mount) => mount.args),
    "--chdir",
    plan.cwd,
    "--",
    ...argv,
  ];
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The bubblewrap binary: `ZE_HARNESS_BWRAP` when set (an absolute path, used as given: a missing
 * one is an error, never a fallback), else `bwrap` on the host's PATH (absolute entries only, so
 * a workdir on PATH cannot supply one). Undefined when there is none.
 */
export function findBwrap(env: Readonly<Record<string, string | undefined>>): { path: string } | { missing: string } {
  const explicit = env["ZE_HARNESS_BWRAP"];
  if (explicit !== undefined && explicit !== "") {
    if (!isAbsolute(explicit)) return { missing: `ZE_HARNESS_BWRAP must be an absolute path, not ${JSON.stringify(explicit)}` };
    return executable(explicit) ? { path: explicit } : { missing: `ZE_HARNESS_BWRAP names ${explicit}, which is not an executable file` };
  }
  for (const directory of (env["PATH"] ?? "").split(delimiter)) {
    if (!isAbsolute(directory)) continue;
    const candidate = join(directory, "bwrap");
    if (executable(candidate)) return { path: candidate };
  }
  return { missing: "no bwrap on PATH" };
}

const PROBE_TIMEOUT_MS = 10_000;
const MAX_PROBE_STDERR = 2_000;

/**
 * Runs `/bin/true` under the same namespaces a command gets; resolves when it exits 0, rejects with
 * {@link SandboxUnavailable} naming bwrap's own complaint otherwise (user namespaces off, no
 * permission to mount /proc in this container, …).
 */
export function probeBwrap(bwrap: string, shareNetwork: boolean): Promise<void> {
  const args = bwrapArguments({ mode: "read-only", cwd: "/", privateTemps: [], protectedPaths: [], hidden: [], emptyFile: "/dev/null", shareNetwork }, ["/bin/true"]);
  return new Promise((resolve, reject) => {
    let stderr = "";
    const child = spawn(bwrap, args, { stdio: ["ignore", "ignore", "pipe"], env: { PATH: "/usr/bin:/bin" } });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_PROBE_STDERR) stderr += chunk.toString("utf8");
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new SandboxUnavailable(`${bwrap} could not be started: ${error.code ?? error.message}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const said = stderr.trim().split("\n").at(-1)?.slice(0, 300);
      reject(new SandboxUnavailable(said ? `${bwrap}: ${said.replace(/^bwrap: /, "")}` : `${bwrap} ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}
