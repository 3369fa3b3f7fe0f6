// The one failure of this room: the sandbox is on but bubblewrap cannot run here. Callers map it
// to their surface's typed error (a tool call's `sandbox_unavailable`, a 503 `UnavailableError`
// reason `sandbox_unavailable`, an MCP server's `spawn_failed`); nothing runs unsandboxed instead.
export class SandboxUnavailable extends Error {
  readonly _tag = "SandboxUnavailable" as const;
  constructor(readonly reason: string) {
    super(
      `The sandbox is on but bubblewrap cannot run here (${reason}); nothing was started. ` +
        "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces, or turn the sandbox off (sandbox.mode \"off\", --sandbox off).",
    );
    this.name = "SandboxUnavailable";
  }
}

/** Matches a {@link SandboxUnavailable} by its `_tag`, across module copies. */
export const isSandboxUnavailable = (value: unknown): value is SandboxUnavailable =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "SandboxUnavailable";
