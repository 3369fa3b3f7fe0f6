// Timers a host may run without: Node's keep a process alive unless unref'd; workerd's (the
// Worker host) are plain numbers with no `unref`, and nothing to keep alive.

/** Lets the process exit while `timer` is pending, where the runtime's timers support it. */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === "object" && timer !== null && typeof (timer as { unref?: unknown }).unref === "function") (timer as { unref(): void }).unref();
}
