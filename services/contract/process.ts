// Whether a process id is alive: the Turn runner (a lease holder's process), the daemon client
// (a registration's process) and terminals (an owner's process) all ask it of another process.

/** True while a process with this pid exists (EPERM: it exists but is not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
