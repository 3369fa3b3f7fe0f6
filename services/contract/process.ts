// Whether a process id is alive: the Turn runner (a lease holder's process), the daemon client
// (a registration's process) and terminals (an owner's process) all ask it of another process.
import { statSync } from "node:fs";

/** True while a process with this pid exists (EPERM: it exists but is not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while a process with this pid exists and belongs to this user. A pid another user owns is
 * not ours, however alive: after a crash another user can wait for a freed pid, so a record
 * naming it (the daemon's `server.json`) must read as stale. Root may signal every process, so
 * the owner is read from `/proc/<pid>` where there is one; elsewhere EPERM says it is foreign.
 */
export function processOwned(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  if (uid !== undefined) {
    try {
      return statSync(`/proc/${pid}`).uid === uid;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && procMounted()) return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let mounted: boolean | undefined;
const procMounted = (): boolean => (mounted ??= (() => {
  try {
    return statSync("/proc/self").isDirectory();
  } catch {
    return false;
  }
})());
