// Daemon startup progress: while `serve --register` opens its database (a backup before migrating
// a database that holds data, then each migration) it writes where it is to `daemon-startup.json`
// beside server.json (0600, replaced atomically, one JSON object): `serving` once it serves, and
// the file goes when it fails or stops. A client waiting for the daemon (the SDK's
// `Daemon.start({ onStartup })`) reads it on each change and once more when the daemon answers.
// Light: node:fs only, no services/host.
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { StorageMigrationProgress } from "../storage/migrate.js";

export const STARTUP_FILE = "daemon-startup.json";

/** The phases of a daemon start, in order. */
export type DaemonStartupStep = "opening" | "backup" | "migration" | "serving";

/** One report: the step, and for a backup its bytes, for a migration its id and position. */
export interface DaemonStartupProgress {
  readonly step: DaemonStartupStep;
  /** The daemon process reporting. */
  readonly pid: number;
  /** ISO time of the report. */
  readonly at: string;
  readonly backup?: { readonly path: string; readonly totalBytes: number; readonly bytes?: number };
  readonly migration?: { readonly id: string; readonly index: number; readonly total: number };
}

/** Hears each startup report while a daemon starts. */
export type DaemonStartObserver = (progress: DaemonStartupProgress) => void;

/** What the daemon writes through. */
export interface DaemonStartupReporter {
  readonly file: string;
  /** A storage migration event (storage's `onMigrationProgress`). */
  migration(progress: StorageMigrationProgress): void;
  step(step: DaemonStartupStep): void;
  /** Failed or stopped: the file goes. */
  done(): void;
}

/** A reporter writing `file` (errors writing it never stop the daemon). */
export function makeDaemonStartupReporter(file: string, pid = process.pid): DaemonStartupReporter {
  const write = (progress: Omit<DaemonStartupProgress, "pid" | "at">): void => {
    const temporary = `${file}.${pid}.tmp`;
    try {
      writeFileSync(temporary, JSON.stringify({ ...progress, pid, at: new Date().toISOString() }), { mode: 0o600 });
      chmodSync(temporary, 0o600);
      renameSync(temporary, file);
    } catch {
      // Progress is a courtesy: a full disk must not fail the start.
    }
  };
  return {
    file,
    migration(progress) {
      switch (progress.kind) {
        case "backup-started":
          return write({ step: "backup", backup: { path: progress.path, totalBytes: progress.totalBytes, bytes: 0 } });
        case "backup-finished":
          return write({ step: "backup", backup: { path: progress.path, totalBytes: progress.bytes, bytes: progress.bytes } });
        case "migration-started":
          return write({ step: "migration", migration: { id: progress.id, index: progress.index, total: progress.total } });
        case "migrations-committed":
          return undefined;
      }
    },
    step: (step) => write({ step }),
    done: () => rmSync(file, { force: true }),
  };
}

/** The current startup report in `file`, when there is a well-formed one. */
export function readDaemonStartup(file: string): DaemonStartupProgress | undefined {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<DaemonStartupProgress>;
    const steps: readonly string[] = ["opening", "backup", "migration", "serving"];
    return typeof value === "object" && value !== null && steps.includes(value.step as string) && typeof value.pid === "number" ? (value as DaemonStartupProgress) : undefined;
  } catch {
    return undefined;
  }
}
