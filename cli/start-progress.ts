// What a command shows while the local daemon starts (services/daemon/progress.ts): on a
// terminal one line redrawn in place — "Starting…", then a bar following the pre-migration
// copy byte by byte, then one per migration — cleared once the daemon answers; otherwise one
// stderr line per backup or migration step (a new, empty database's start prints nothing, so
// scripts keep a clean stderr).
import { basename } from "node:path";
import type { StartProgress } from "../services/daemon/progress.js";

const BAR_WIDTH = 24;

const mebibytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function bar(done: number, total: number): string {
  const ratio = total <= 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * BAR_WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

/** The one-line form of a step (for a non-terminal), or undefined for what is not a step. */
export function progressStepLine(progress: StartProgress): string | undefined {
  switch (progress.kind) {
    case "backup":
      return progress.copiedBytes === 0 ? `Backing up the database to ${progress.path} (${mebibytes(progress.totalBytes)})…` : undefined;
    case "backup-done":
      return `Backed up the database to ${progress.path} (${mebibytes(progress.bytes)}).`;
    case "migration":
      return `Applying migration ${progress.index + 1}/${progress.total}: ${progress.id}…`;
    case "migrated":
      return `Migrated the database (${progress.count} migration${progress.count === 1 ? "" : "s"}).`;
    default:
      return undefined;
  }
}

/** The redrawn terminal line of a state. */
export function progressBarLine(progress: StartProgress): string | undefined {
  switch (progress.kind) {
    case "starting":
      return "Starting the local Ze Harness daemon…";
    case "backup":
      return `Backing up ${basename(progress.path)} ${bar(progress.copiedBytes, progress.totalBytes)} ${mebibytes(progress.copiedBytes)}/${mebibytes(progress.totalBytes)}`;
    case "backup-done":
      return `Backing up ${basename(progress.path)} ${bar(1, 1)} ${mebibytes(progress.bytes)}`;
    case "migration":
      return `Migrating the database ${bar(progress.index, progress.total)} ${progress.index + 1}/${progress.total} ${progress.id}`;
    case "migrated":
      return `Migrating the database ${bar(1, 1)} ${progress.count}/${progress.count}`;
    default:
      return undefined;
  }
}

/** The progress callback for connectDaemon: a bar on a terminal, lines otherwise. */
export function daemonStartProgress(stream: NodeJS.WriteStream = process.stderr): (progress: StartProgress) => void {
  if (stream.isTTY === true) {
    return (progress) => {
      const line = progressBarLine(progress);
      if (progress.kind === "done") stream.write("\r\x1b[2K");
      else if (line !== undefined) stream.write(`\r\x1b[2K${line}`);
    };
  }
  return (progress) => {
    const line = progressStepLine(progress);
    if (line !== undefined) stream.write(`${line}\n`);
  };
}
