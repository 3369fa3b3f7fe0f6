// The daemon a local command proved last (`daemon-proven.json`, 0600 in the 0700 state
// directory): the registration it proved (id, URL, pid), the start time of that pid, a digest of
// the token it proved it holds, and the status it answered. A warm command whose registration,
// token and daemon process (the same pid started at the same instant: not a reused pid) all still
// match skips the challenge and the status call — two of a one-shot command's round trips — and
// sends its request straight away: the listener is the same live process that proved itself, and
// the transport still checks on every connection that the listening end is this user's.
//
// Only where both can be read — the process start time (/proc/<pid>/stat) and the socket table
// (transport.ts) — is a proof reused; elsewhere every command proves the daemon afresh. Light on
// purpose: every local command loads it.
import { createHash } from "node:crypto";
import { accessSync, constants, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DaemonFiles } from "./paths.js";
import type { Registration } from "./registration.js";
import type { DaemonStatus } from "./router.js";

export const PROOF_FILE = "daemon-proven.json";

/** What a reused proof knows of the daemon: its status without the fields that change while it runs. */
export type ProvenStatus = Omit<DaemonStatus, "runningTurns" | "uptimeMs" | "registered">;

interface ProofRecord {
  readonly id: string;
  readonly url: string;
  readonly pid: number;
  readonly start: string;
  readonly token: string;
  readonly status: ProvenStatus;
}

const proofFile = (files: DaemonFiles): string => join(files.directory, PROOF_FILE);

/** A one-way digest of the token: the file names which token was proven without holding it. */
const tokenDigest = (token: string): string => createHash("sha256").update(`ze-harness-daemon-proven\n${token}`).digest("base64url");

/**
 * Whether the kernel's socket tables can be read (so transport.ts checks each listener's owner).
 * Asked of the file, not by reading it: producing the table costs ≈ 4 ms of kernel time a read.
 */
function socketTablePresent(): boolean {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    try {
      accessSync(table, constants.R_OK);
      return true;
    } catch {
      // the other one, or neither: not Linux
    }
  }
  return false;
}

/** When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or undefined where it cannot be read. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = fields[19];
    return start !== undefined && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/** Records that the daemon `registration` proved it holds `token` and answered `status`. Best effort. */
export function recordProof(files: DaemonFiles, registration: Registration, token: string, status: DaemonStatus): void {
  const start = processStart(registration.pid);
  if (start === undefined || !socketTablePresent()) return;
  const { runningTurns: _turns, uptimeMs: _uptime, registered: _registered, ...fixed } = status;
  const record: ProofRecord = { id: registration.id, url: registration.url, pid: registration.pid, start, token: tokenDigest(token), status: fixed };
  const temporary = `${proofFile(files)}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    renameSync(temporary, proofFile(files));
  } catch {
    rmSync(temporary, { force: true });
  }
}

/**
 * The status the daemon `registration` answered when it proved it holds `token`, when that proof
 * still stands: the same registration and token, and its pid still the very process that proved it.
 */
export function provenStatus(files: DaemonFiles, registration: Registration, token: string): ProvenStatus | undefined {
  let record: Partial<ProofRecord>;
  try {
    record = JSON.parse(readFileSync(proofFile(files), "utf8")) as Partial<ProofRecord>;
  } catch {
    return undefined;
  }
  if (record.id !== registration.id || record.url !== registration.url || record.pid !== registration.pid || typeof record.status !== "object" || record.status === null) return undefined;
  if (record.status.id !== registration.id || record.status.url !== registration.url || record.status.pid !== registration.pid) return undefined;
  if (record.token !== tokenDigest(token)) return undefined;
  if (record.start === undefined || record.start !== processStart(registration.pid) || !socketTablePresent()) return undefined;
  return record.status;
}

/** Forgets the proof (the daemon it names did not answer as proven). */
export function forgetProof(files: DaemonFiles): void {
  rmSync(proofFile(files), { force: true });
}
