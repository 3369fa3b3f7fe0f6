// The SDK's view of the shared local daemon (services/daemon): `Daemon` reuses the healthy
// registered server or spawns `serve --register` and waits for it (`transport()` / `start()`),
// reads its status and stops it; its startup progress (database backup, migrations) reaches an
// observer through the daemon-startup.json file the starting daemon writes. Also the daemon
// log's helpers (`makeDaemonLog`, `startDaemonLogTrim`) and the names of its files.
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { connectDaemon, daemonStatus, stopDaemon, DaemonVersionMismatch, type DaemonStatus, type ServiceStatus, type StopResult } from "../services/daemon/client.js";
import { openDaemonLog, type DaemonLog } from "../services/daemon/log.js";
import { daemonDirectory, type Env } from "../services/daemon/paths.js";
import { daemonRelease } from "../services/daemon/release.js";
import { STARTUP_FILE, readDaemonStartup, type DaemonStartObserver } from "../services/daemon/startup.js";

export { DaemonError, DaemonOptionsMismatch, DaemonVersionMismatch } from "../services/daemon/client.js";
export { startDaemonLogTrim } from "../services/daemon/log.js";
export { makeDaemonStartupReporter, STARTUP_FILE as DAEMON_STARTUP_FILE_NAME } from "../services/daemon/startup.js";
export type { DaemonStartObserver, DaemonStartupProgress, DaemonStartupReporter, DaemonStartupStep } from "../services/daemon/startup.js";
export type { DaemonLog } from "../services/daemon/log.js";
export type { StorageMigrationProgress } from "../services/storage/migrate.js";

/** `Daemon.status()`: the running daemon's registration and state, or `{ running: false }`. */
export type DaemonStatusValue = ServiceStatus;

/** A logged connection (`client.connect`). */
export interface ClientConnection {
  readonly connectionId: string;
  readonly remoteAddr: string | undefined;
  readonly remotePort: number | undefined;
}

/** A logged disconnection (`client.disconnect`): the connection and how long it lasted. */
export interface ClientDisconnection extends ClientConnection {
  readonly durationMs: number;
}

export interface DaemonTransportOptions {
  /** The database a spawned daemon opens; a running one must have opened it (else DaemonOptionsMismatch). */
  readonly database?: string;
  /** The `--config` file, likewise. */
  readonly config?: string;
  /** The directory a spawned daemon serves (default: the Daemon's `cwd`). */
  readonly cwd?: string;
  /** Hears each startup report (backup, migrations) while a daemon this call spawned starts. */
  readonly onStartup?: DaemonStartObserver;
  /** Lines for a user (a daemon updated to this release). */
  readonly notice?: (line: string) => void;
  /** Refuse a running daemon of another release that could not be handed off (DaemonVersionMismatch). */
  readonly requireSameRelease?: boolean;
}

/** How to reach the daemon: its URL, a fetch that authenticates itself, and its status. */
export interface DaemonTransport {
  readonly url: string;
  /** Adds the daemon token itself and follows a replaced daemon; give a client built on it no token. */
  readonly fetch: (request: Request) => Promise<Response>;
  readonly status: DaemonStatus;
  /** This call spawned the daemon. */
  readonly spawned: boolean;
}

export interface DaemonOptions {
  /** The environment whose state directory holds the daemon's files (default `process.env`). */
  readonly env?: Env;
  /** Where a spawned daemon starts (default `process.cwd()`). */
  readonly cwd?: string;
}

/** The shared local daemon of this user (one per state directory). */
export class Daemon {
  readonly #env: Env;
  readonly #cwd: string;

  constructor(options: DaemonOptions = {}) {
    this.#env = options.env ?? process.env;
    this.#cwd = options.cwd ?? process.cwd();
  }

  /** The directory of server.json, daemon-token, daemon.log and daemon-startup.json. */
  get directory(): string {
    return daemonDirectory(this.#env);
  }

  /** The healthy registered daemon, or a new one spawned and waited for. */
  async transport(options: DaemonTransportOptions = {}): Promise<DaemonTransport> {
    let watcher: FSWatcher | undefined;
    const file = join(this.directory, STARTUP_FILE);
    let last = "";
    const report = (pid?: number): void => {
      const progress = readDaemonStartup(file);
      if (progress === undefined || (pid !== undefined && progress.pid !== pid)) return;
      const key = JSON.stringify(progress);
      if (key === last) return;
      last = key;
      try {
        options.onStartup?.(progress);
      } catch {
        // An observer's failure is not the start's.
      }
    };
    try {
      const endpoint = await connectDaemon({
        env: this.#env,
        cwd: options.cwd ?? this.#cwd,
        database: options.database,
        config: options.config,
        ...(options.notice ? { notice: options.notice } : {}),
        progress: (state) => {
          if (state.kind !== "starting" || options.onStartup === undefined) return;
          try {
            watcher = watch(this.directory, (_event, name) => {
              if (name === STARTUP_FILE) report();
            });
            // A file left by an earlier daemon is not this start's.
            last = JSON.stringify(readDaemonStartup(file) ?? null);
          } catch {
            // No watch (a full inotify table): the start still completes, without reports.
          }
          report();
        },
      });
      const status = endpoint.status;
      // The spawned daemon's last word (`serving`), which a quick start may have written before the watch saw it.
      if (endpoint.spawned && options.onStartup !== undefined) report(status.pid);
      if (options.requireSameRelease === true && status.version !== daemonRelease()) throw new DaemonVersionMismatch(status.version, daemonRelease());
      return { url: endpoint.url, fetch: endpoint.fetch, status, spawned: endpoint.spawned };
    } finally {
      watcher?.close();
    }
  }

  /** Starts the daemon unless one is running; resolves with its status. */
  async start(options: DaemonTransportOptions = {}): Promise<DaemonStatus> {
    return (await this.transport(options)).status;
  }

  status(): Promise<DaemonStatusValue> {
    return daemonStatus(this.#env);
  }

  /** Stops it gracefully (shutdown request, then SIGTERM, then SIGKILL after 15 s). */
  stop(options: { readonly reason?: string } = {}): Promise<StopResult> {
    return stopDaemon({ env: this.#env, ...(options.reason !== undefined ? { reason: options.reason } : {}) });
  }
}

/** Opens (creating, 0600) the daemon's logfmt log at `file` (default: daemon.log in the state directory). */
export function makeDaemonLog(file?: string, options: { readonly env?: Env; readonly run?: string; readonly service?: string } = {}): DaemonLog {
  return openDaemonLog(file ?? join(daemonDirectory(options.env ?? process.env), "daemon.log"), {
    ...(options.run !== undefined ? { run: options.run } : {}),
    ...(options.service !== undefined ? { service: options.service } : {}),
  });
}

