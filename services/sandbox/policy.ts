// What a sandbox allows: the config's `sandbox` key (spec/config.tsp `SandboxConfig`) resolved
// with a host's `--sandbox MODE` flag, plus the host names of a network allowlist.
import type { SandboxConfig } from "../config/types.js";

/** A sandbox mode that runs commands under bubblewrap. */
export type SandboxMode = "workspace-write" | "read-only";

/** The config's and the flag's value: a mode, or `off` (no sandbox, the reference's behaviour). */
export type SandboxSetting = SandboxMode | "off";

export const SANDBOX_SETTINGS: readonly SandboxSetting[] = ["workspace-write", "read-only", "off"];

/** `none`: no network namespace but loopback; `host`: the host's network; `hosts`: only these names, through the proxy. */
export type SandboxNetwork = { readonly kind: "none" } | { readonly kind: "host" } | { readonly kind: "hosts"; readonly hosts: readonly string[] };

export interface SandboxPolicy {
  readonly mode: SandboxMode;
  readonly network: SandboxNetwork;
}

export const isSandboxSetting = (value: string): value is SandboxSetting => (SANDBOX_SETTINGS as readonly string[]).includes(value);

/**
 * The effective policy: the flag's mode when given, else the config's; `undefined` when that is
 * `off` (or unset). The network always comes from the config (default: none).
 */
export function resolveSandboxPolicy(config: SandboxConfig | undefined, flag?: SandboxSetting): SandboxPolicy | undefined {
  const mode = flag ?? config?.mode ?? "off";
  if (mode === "off") return undefined;
  const network = config?.network;
  if (network === true) return { mode, network: { kind: "host" } };
  if (Array.isArray(network) && network.length > 0) return { mode, network: { kind: "hosts", hosts: [...new Set(network.map(normalizeHost))].sort() } };
  return { mode, network: { kind: "none" } };
}

/** Lower case, no trailing dot, no IPv6 brackets: how the proxy compares names. */
export function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  while (name.endsWith(".")) name = name.slice(0, -1);
  return name;
}

/** True when `host` (as a client named it) is on the allowlist: an exact name, or `*.domain` for any name below `domain`. */
export function hostAllowed(allowed: readonly string[], host: string): boolean {
  const name = normalizeHost(host);
  if (name === "") return false;
  return allowed.some((entry) => (entry.startsWith("*.") ? name.endsWith(entry.slice(1)) && name.length > entry.length - 1 : name === entry));
}

/** One line naming the policy, for messages. */
export function describePolicy(policy: SandboxPolicy): string {
  const network = policy.network.kind === "none" ? "no network" : policy.network.kind === "host" ? "the host's network" : `network only to ${policy.network.hosts.join(", ")}`;
  return `${policy.mode}, ${network}`;
}
