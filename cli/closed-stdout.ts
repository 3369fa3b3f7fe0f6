// A closed stdout (`ze-harness run … | head -2`) ends the command quietly: no message, no
// stack trace, exit 0. By default the process exits at once: a Turn it followed keeps running
// on the daemon (or the --remote server), durably, and `turn show` reads it later. A command
// whose own process runs the Turn (`--embedded run`) asks instead to be told (onStdoutClosed)
// and lets the Turn finish with its answer discarded.
let closed = false;
let whenClosed: () => void = () => process.exit(0);

/** Installs the handler (cli/main.ts, once per process). */
export function quietOnClosedStdout(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
    if (closed) return;
    closed = true;
    whenClosed();
  });
}

/** Replaces the default exit with `handler` (called once, when stdout's reader goes away). */
export function onStdoutClosed(handler: () => void): void {
  whenClosed = handler;
}

/** True once stdout's reader went away. */
export const stdoutClosed = (): boolean => closed;
