// A starting daemon's progress, from the daemon to the command that started it. The daemon
// writes each backup and migration step as a log line in daemon.log (`storage.backup.started`,
// `storage.backup.finished`, `storage.migration.started`, `storage.migrations.committed`,
// written whatever the log level); the starting command follows the log from where it was when
// it spawned the daemon and, while the pre-migration copy is written, the copy's size on disk —
// so it sees the copy byte by byte, then each migration. Light: node: built-ins and log.ts.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { StorageMigrationProgress } from "../storage/migrate.js";
import { parseLogLine, type LogFields } from "./log.js";

/** What a starting command is told (services/daemon/client.ts → the CLI's bar or lines). */
export type StartProgress =
  | { readonly kind: "starting" }
  | { readonly kind: "backup"; readonly path: string; readonly copiedBytes: number; readonly totalBytes: number }
  | { readonly kind: "backup-done"; readonly path: string; readonly bytes: number }
  | { readonly kind: "migration"; readonly id: string; readonly index: number; readonly total: number }
  | { readonly kind: "migrated"; readonly count: number }
  | { readonly kind: "done" };

/**
 * The daemon side: one log line per step of a database that already held data (a new database's
 * migrations are not logged: its start has nothing to report).
 */
export function progressLogger(log: (event: string, fields: LogFields) => void): (progress: StorageMigrationProgress) => void {
  let upgrading = false;
  return (progress) => {
    switch (progress.kind) {
      case "backup-started":
        return log("storage.backup.started", { path: progress.path, temporary: progress.temporaryPath, bytes: progress.totalBytes });
      case "backup-finished":
        return log("storage.backup.finished", { path: progress.path, bytes: progress.bytes });
      case "migration-started":
        if (!progress.upgrade) return;
        upgrading = true;
        return log("storage.migration.started", { id: progress.id, index: progress.index, total: progress.total, upgrade: true });
      case "migrations-committed":
        if (upgrading) log("storage.migrations.committed", { count: progress.ids.length });
        return;
    }
  };
}

function size(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch {
    return undefined;
  }
}

/**
 * Follows daemon.log from `offset`: poll() returns the progress since the last poll, and says
 * whether the daemon showed any sign of work (a new log byte, a copy that grew).
 */
export class ProgressFollower {
  private offset: number;
  private partial = "";
  private backup: { path: string; temporary: string; total: number; copied: number } | undefined;
  /** A step is under way (a copy or a migration begun and not yet committed). */
  busy = false;

  constructor(private readonly file: string, offset: number) {
    this.offset = offset;
  }

  poll(): { readonly events: StartProgress[]; readonly active: boolean } {
    const events: StartProgress[] = [];
    let active = false;
    const end = size(this.file) ?? this.offset;
    if (end > this.offset) {
      active = true;
      const length = Math.min(end - this.offset, 1024 * 1024);
      const buffer = Buffer.alloc(length);
      const fd = openSync(this.file, "r");
      try {
        readSync(fd, buffer, 0, length, this.offset);
      } finally {
        closeSync(fd);
      }
      this.offset += length;
      const lines = (this.partial + buffer.toString("utf8")).split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) {
        const event = this.read(line);
        if (event !== undefined) events.push(event);
      }
    }
    if (this.backup !== undefined) {
      const copied = size(this.backup.temporary);
      if (copied !== undefined && copied > this.backup.copied) {
        this.backup.copied = copied;
        active = true;
        events.push({ kind: "backup", path: this.backup.path, copiedBytes: Math.min(copied, this.backup.total), totalBytes: this.backup.total });
      }
    }
    return { events, active };
  }

  private read(line: string): StartProgress | undefined {
    const entry = parseLogLine(line);
    if (entry === undefined) return undefined;
    const { fields } = entry;
    const number = (key: string): number => Number(fields[key] ?? 0);
    switch (entry.event) {
      case "storage.backup.started":
        this.busy = true;
        this.backup = { path: fields["path"] ?? "", temporary: fields["temporary"] ?? "", total: number("bytes"), copied: 0 };
        return { kind: "backup", path: this.backup.path, copiedBytes: 0, totalBytes: this.backup.total };
      case "storage.backup.finished":
        this.backup = undefined;
        return { kind: "backup-done", path: fields["path"] ?? "", bytes: number("bytes") };
      case "storage.migration.started":
        // A new database's migrations are not worth a line; an upgrade's are.
        if (fields["upgrade"] !== "true") return undefined;
        this.busy = true;
        return { kind: "migration", id: fields["id"] ?? "", index: number("index"), total: number("total") };
      case "storage.migrations.committed":
        if (!this.busy) return undefined;
        this.busy = false;
        return { kind: "migrated", count: number("count") };
      default:
        return undefined;
    }
  }
}
