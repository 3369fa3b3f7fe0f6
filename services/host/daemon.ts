// The composition root of `serve --register`: the shared local daemon. It mints a new bearer
// secret (written to `daemon-token` once it has won the registration: a replaced registration
// never keeps the token of the daemon it replaces), builds the harness with that token and its log (so it alone serves
// `GET /v1/logs` and logs `turn.submitted`), mounts the control router at `/_daemon/` beside the
// v1 handler, binds loopback on the first free port from 4096, then registers in `server.json`.
// A racing spawner that loses the registration closes again; a daemon whose registration is
// replaced shuts itself down on its 10-second heartbeat. Shutdown (the `shutdown` mutation,
// SIGTERM/SIGINT, a lost registration) closes the listener and the harness — running Turns end
// with host_shutdown — and then removes its own registration. A native installation's background
// update checks start once it is registered (services/release/background.ts).
import { randomUUID } from "node:crypto";
import { LOOPBACK_HOSTS } from "../http/guard.js";
import { configIdentity, databaseIdentity } from "../daemon/identity.js";
import { connectionLogger, openDaemonLog, startDaemonLogTrim } from "../daemon/log.js";
import { STARTUP_FILE, makeDaemonStartupReporter } from "../daemon/startup.js";
import { join, resolve } from "node:path";
import { progressLogger } from "../daemon/progress.js";
import { FIRST_PORT, PORT_SCAN, daemonFiles } from "../daemon/paths.js";
import { claimRegistration, ensureDirectory, newToken, readRegistration, removeRegistration, writeToken, type Registration } from "../daemon/registration.js";
import { CONTROL_ENDPOINT, controlHandler, type DaemonControl, type RunningTurn } from "../daemon/router.js";
import { binaryPath } from "../daemon/release.js";
import { startUpdateChecks } from "../release/background.js";
import { createHarness, type HarnessOptions } from "./harness.js";
import { listen, type Listener } from "./listen.js";
import { release } from "./version.js";

export const HEARTBEAT_MS = 10_000;
/** Lets the shutdown's 202 leave before the listener closes its connections. */
const ACKNOWLEDGE_MS = 50;

export type DaemonOptions = Omit<HarnessOptions, "allowedHosts" | "runnerScope" | "token" | "daemonLog">;

export interface RunningDaemon {
  readonly registration: Registration;
  /** Resolves once the daemon has closed (for any reason). */
  readonly closed: Promise<void>;
  /** Starts a graceful shutdown (idempotent); resolves when it is done. */
  shutdown(reason: string): Promise<void>;
}

/** A racing spawner that lost: another daemon is registered and live. */
export class DaemonRegistrationLost extends Error {
  readonly _tag = "DaemonRegistrationLost";
  constructor(readonly holder: Registration) {
    super(`another daemon (pid ${holder.pid}, ${holder.url}) is registered; this one closes`);
  }
}

async function listenFrom(fetch: (request: Request) => Promise<Response>, log: ReturnType<typeof openDaemonLog>): Promise<Listener> {
  for (let port = FIRST_PORT; port < FIRST_PORT + PORT_SCAN; port++) {
    try {
      return await listen(fetch, {
        port,
        hostname: "127.0.0.1",
        onConnection: connectionLogger(log),
        admission: { onRefused: (reason, count) => log.warn("connection.refused", { reason, count }) },
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    }
  }
  throw new Error(`no free port from ${FIRST_PORT} to ${FIRST_PORT + PORT_SCAN - 1}`);
}

export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const files = daemonFiles(options.env);
  ensureDirectory(files.directory);
  const token = newToken();
  const log = openDaemonLog(files.log);
  // Trimmed once at boot and hourly (stopped at shutdown).
  const stopTrim = startDaemonLogTrim(log);
  // Where a waiting client reads the backup and migration steps (removed once serving or failed).
  const startup = makeDaemonStartupReporter(join(files.directory, STARTUP_FILE));
  startup.step("opening");
  const logProgress = progressLogger((event, fields) => log.progress(event, fields));
  const serverRoot = resolve(options.serverRoot);
  let harness: Awaited<ReturnType<typeof createHarness>>;
  try {
    harness = await createHarness({
      ...options,
      serverRoot,
      token,
      allowedHosts: LOOPBACK_HOSTS,
      runnerScope: "unowned",
      daemonLog: log,
      backgroundModels: true,
      backgroundPlugins: true,
      onMigrationProgress: (progress) => {
        startup.migration(progress);
        // Each backup and migration step, for the command that started this daemon (services/daemon/progress.ts).
        logProgress(progress);
      },
    });
  } catch (error) {
    startup.done();
    stopTrim();
    log.error("daemon.failed", { error: error instanceof Error ? error.message : String(error) });
    log.close();
    throw error;
  }
  startup.step("serving");
  const id = randomUUID();
  const startedAt = new Date();
  const database = databaseIdentity(options.database, options.env);
  const config = configIdentity(options.configPath, serverRoot);
  let registration: Registration | undefined;
  let registered = false;
  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolvePromise) => (resolveClosed = resolvePromise));
  const timers: NodeJS.Timeout[] = [];
  let stopUpdateChecks = (): void => {};

  const runningTurns = (): readonly RunningTurn[] => harness.runner?.running() ?? [];
  const shutdown = (reason: string): Promise<void> => {
    closing ??= (async () => {
      for (const timer of timers) clearInterval(timer);
      stopUpdateChecks();
      stopTrim();
      const ending = runningTurns();
      log.info("daemon.shutdown", { reason, runningTurns: ending.length });
      await new Promise((resolvePromise) => setTimeout(resolvePromise, ACKNOWLEDGE_MS));
      try {
        await listener.close();
        await harness.close();
      } finally {
        if (registration) removeRegistration(files.registration, registration.id);
        startup.done();
        log.info("daemon.stop", { reason });
        log.close();
        resolveClosed();
      }
    })();
    return closing;
  };
  const heartbeat = (): { registered: boolean; checkedAt: string } => {
    const current = readRegistration(files.registration);
    registered = registration !== undefined && current?.id === registration.id;
    if (registration !== undefined && !registered && closing === undefined) {
      log.warn("daemon.registration_replaced", { holderPid: current?.pid });
      void shutdown("registration replaced");
    }
    return { registered, checkedAt: new Date().toISOString() };
  };
  const control: DaemonControl = {
    status: () => ({
      id,
      version: release(),
      url: listener.url,
      pid: process.pid,
      run: log.run,
      database,
      config,
      sandbox: options.sandbox ?? null,
      serverRoot,
      startedAt: startedAt.toISOString(),
      uptimeMs: Date.now() - startedAt.getTime(),
      registered,
      runningTurns: runningTurns(),
    }),
    runningTurns,
    heartbeat,
    shutdown: (reason, ifIdle) => {
      const running = runningTurns();
      if (ifIdle === true && running.length > 0) {
        log.info("daemon.shutdown_refused", { reason, runningTurns: running.length });
        return { accepted: false, turns: running };
      }
      void shutdown(reason);
      return { accepted: true, turns: running };
    },
  };
  const controlFetch = controlHandler(control, { token, allowedHosts: LOOPBACK_HOSTS });
  const fetch = (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    return path === CONTROL_ENDPOINT || path.startsWith(`${CONTROL_ENDPOINT}/`) ? controlFetch(request) : harness.fetch(request);
  };
  let listener: Listener;
  try {
    listener = await listenFrom(fetch, log);
  } catch (error) {
    stopTrim();
    startup.done();
    await harness.close();
    log.close();
    throw error;
  }
  registration = { id, version: release(), url: listener.url, pid: process.pid };
  const claim = claimRegistration(files.registration, registration);
  if (!claim.ok) {
    log.info("daemon.lost_race", { pid: process.pid, holderPid: claim.holder.pid, holderUrl: claim.holder.url });
    registration = undefined;
    await shutdown("lost the registration race");
    throw new DaemonRegistrationLost(claim.holder);
  }
  // Won: from now on clients read this daemon's token (until the file names it they retry the proof).
  writeToken(files.token, token);
  registered = true;
  log.info("daemon.start", { url: listener.url, pid: process.pid, version: release(), database });
  const beat = setInterval(heartbeat, HEARTBEAT_MS);
  beat.unref();
  timers.push(beat);
  // Checked by a CLI process of this daemon's own executable, so a check never blocks the daemon.
  stopUpdateChecks = startUpdateChecks({ env: options.env, log, command: [process.execPath, binaryPath()] });
  return { registration, closed, shutdown };
}
