// Longer than ~400 lines on purpose: finding, proving, spawning (following its start-up progress),
// following and stopping the daemon are one client of one registration, read together.
// The daemon's client side, the one module of this room a surface loads (cli/base.ts, the
// `service` commands): find the registered daemon and check it is healthy (its pid alive, its
// status answering with its id behind the token), or spawn `serve --register` detached (stdio
// to daemon.log, never the caller's) and wait for its registration; stop it gracefully
// (`POST /_daemon/shutdown`, then SIGTERM, then SIGKILL after 15 s). Stale registrations (a dead
// pid, nothing answering, another server at its URL) are removed; an older daemon is handed off
// to this release when it is idle. Imports only node: built-ins and the light files beside it —
// never services/host — so a warm-daemon command stays cheap.
import { closeSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configIdentity, databaseIdentity, namesDatabase } from "./identity.js";
import { controlClient, ControlError } from "./control-client.js";
import { daemonFiles, type DaemonFiles, type Env } from "./paths.js";
import { processAlive, processOwned } from "../contract/process.js";
import { CHALLENGE_PATH, newNonce, verifyProof } from "./challenge.js";
import { ProgressFollower, type StartProgress } from "./progress.js";
import { ensureDirectory, readRegistration, readToken, removeStaleRegistration, type Registration } from "./registration.js";
import { binaryPath, daemonRelease } from "./release.js";
import { FOREIGN_LISTENER, verifiedFetch } from "./transport.js";
import { forgetProof, provenStatus, recordProof, type ProvenStatus } from "./proof-cache.js";
import { isLightRequest, toHttpRequest, toWebResponse, type HttpRequest, type LightResponse, type RequestLike } from "../contract/light-http.js";

export { verifiedFetch } from "./transport.js";
import type { DaemonStatus, RunningTurn } from "./router.js";

export type { DaemonStatus, RunningTurn } from "./router.js";
export type { StartProgress } from "./progress.js";
export type { ProvenStatus } from "./proof-cache.js";

import { DaemonError, DaemonOptionsMismatch } from "./errors.js";

export { DaemonError, DaemonOptionsMismatch, DaemonVersionMismatch } from "./errors.js";

export interface DaemonRequest {
  readonly env: Env;
  /** The directory a spawned daemon starts in (its server root) and relative --config resolves from. */
  readonly cwd: string;
  readonly database?: string | undefined;
  readonly config?: string | undefined;
  /** `--sandbox MODE`: a spawned daemon starts with it; a running one must have started with it. */
  readonly sandbox?: string | undefined;
  /** Lines for the user (a started or updated daemon); the CLI writes them to stderr. */
  readonly notice?: (line: string) => void;
  /**
   * A starting daemon's progress (services/daemon/progress.ts): `starting`, the pre-migration
   * copy byte by byte and each migration of a database that held data, then `done`.
   */
  readonly progress?: ((progress: StartProgress) => void) | undefined;
}

export interface DaemonEndpoint {
  readonly url: string;
  /**
   * The transport for API calls (node:http: cheaper than the global fetch for a one-shot command).
   * It adds the token itself and follows a replaced daemon (see followingFetch): give the client no token.
   * It answers a real Request with a real Response, and the CLI bundle's light request
   * (services/contract/light-http.ts) with a light response: no undici on the warm-daemon path.
   */
  readonly fetch: DaemonFetch;
  readonly token: string;
  readonly status: DaemonStatus;
  /** This call spawned it. */
  readonly spawned: boolean;
  /** It runs this very release (so this build's code wrote its response bodies: a client may skip validating them). */
  readonly sameRelease: boolean;
}

const STATUS_TIMEOUT_MS = 3_000;
const START_TIMEOUT_MS = 60_000;
const POLL_MS = 25;
export const STOP_GRACE_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

type Probe = { readonly healthy: true; readonly token: string; readonly status: DaemonStatus } | { readonly healthy: false; readonly reason: string };

/** How often a listener that does not (yet) prove itself is asked again: a new daemon writes its token just after registering. */
const PROOF_TRIES = 10;
const PROOF_RETRY_MS = 20;

type Challenge = { readonly kind: "proven" } | { readonly kind: "unproven"; readonly reason: string } | { readonly kind: "foreign" | "unreachable"; readonly reason: string };

/** Asks the listener at the registration's URL to prove it holds `token` (challenge.ts); the token itself is not sent. */
async function challenge(registration: Registration, token: string, timeoutMs: number): Promise<Challenge> {
  const nonce = newNonce();
  let response: LightResponse;
  try {
    response = await verifiedFetch({ url: `${registration.url}${CHALLENGE_PATH}?nonce=${nonce}`, method: "GET", headers: {}, body: null, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === FOREIGN_LISTENER) return { kind: "foreign", reason: cause.message ?? "another user's listener" };
    return { kind: "unreachable", reason: `cannot reach the daemon at ${registration.url}: ${cause?.code ?? (error instanceof Error ? error.message : String(error))}` };
  }
  const answer: unknown = await response.json().catch(() => undefined);
  if (response.ok && verifyProof(token, { id: registration.id, url: registration.url, nonce }, answer)) return { kind: "proven" };
  return { kind: "unproven", reason: `the listener at ${registration.url} did not prove it is the registered daemon` };
}

/**
 * Whether `registration` is a live daemon answering as itself: its pid alive and this user's, its
 * listener this user's (transport.ts) and proving it holds the token (challenge.ts) before the
 * token is sent with the status call.
 */
async function probe(files: DaemonFiles, registration: Registration): Promise<Probe> {
  if (!processOwned(registration.pid)) return { healthy: false, reason: `its process ${registration.pid} is gone or not this user's` };
  let failure = "";
  // A live process gets a second, longer chance: a busy machine must not make a healthy daemon look stale.
  for (const timeoutMs of [STATUS_TIMEOUT_MS, 2 * STATUS_TIMEOUT_MS]) {
    let token: string | undefined;
    let proved: Challenge = { kind: "unproven", reason: "the daemon token is missing" };
    for (let attempt = 0; attempt < PROOF_TRIES; attempt++) {
      token = readToken(files.token);
      if (token !== undefined) proved = await challenge(registration, token, timeoutMs);
      if (proved.kind !== "unproven") break;
      await sleep(PROOF_RETRY_MS);
    }
    if (proved.kind === "foreign" || proved.kind === "unproven") return { healthy: false, reason: proved.reason };
    if (proved.kind === "unreachable") {
      failure = proved.reason;
      if (!processOwned(registration.pid)) break;
      continue;
    }
    try {
      const status = await controlClient(registration.url, token!, { timeoutMs, fetch: verifiedFetch }).query("status");
      if (status.id !== registration.id) return { healthy: false, reason: `another server answers at ${registration.url}` };
      return { healthy: true, token: token!, status };
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
      if (!(error instanceof ControlError) || error.status !== 0 || !processOwned(registration.pid)) break;
    }
  }
  return { healthy: false, reason: failure };
}

/** -1, 0 or 1 as release `a` is older than, equal to or newer than `b` (numeric dot parts). */
export function compareReleases(a: string, b: string): number {
  const parts = (value: string) => value.split(/[.+-]/).map((part) => Number.parseInt(part, 10));
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const [x, y] = [left[index] ?? 0, right[index] ?? 0];
    if (Number.isNaN(x) || Number.isNaN(y)) return a === b ? 0 : a < b ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** First start wins: a command naming another database or config than the daemon's is refused. */
function checkCompatible(request: DaemonRequest, status: ProvenStatus): void {
  if (namesDatabase(request.database, request.env)) {
    const wanted = databaseIdentity(request.database, request.env);
    if (wanted !== status.database) {
      throw new DaemonOptionsMismatch(
        `the local daemon already runs with database ${status.database}, not ${wanted}: run \`ze-harness service restart\` with that --database to switch the daemon, or pass --embedded to run this command in-process`,
      );
    }
  }
  const config = configIdentity(request.config, request.cwd);
  if (config !== null && config !== status.config) {
    throw new DaemonOptionsMismatch(
      `the local daemon already runs with ${status.config === null ? "no --config" : `config ${status.config}`}, not ${config}: run \`ze-harness service restart\` with that --config to switch the daemon, or pass --embedded to run this command in-process`,
    );
  }
  // A sandbox asked for is never silently not applied: the daemon must have started with it.
  if (request.sandbox !== undefined && request.sandbox !== (status.sandbox ?? null)) {
    throw new DaemonOptionsMismatch(
      `the local daemon already runs with ${status.sandbox ? `--sandbox ${status.sandbox}` : "no --sandbox"}, not --sandbox ${request.sandbox}: run \`ze-harness service restart --sandbox ${request.sandbox}\` to switch the daemon, or pass --embedded to run this command in-process`,
    );
  }
}

function logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** What the daemon wrote to its log since `offset`: its own error line when it failed. */
function daemonError(file: string, offset: number): DaemonError {
  let text = "";
  try {
    const size = logSize(file);
    const length = Math.min(Math.max(size - offset, 0), 64 * 1024);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, "r");
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    text = buffer.toString("utf8");
  } catch {
    // No log: the message below says so.
  }
  const line = text.split("\n").reverse().find((candidate) => candidate.startsWith("error: "));
  const tagged = line === undefined ? undefined : /^error: ([A-Za-z]\w*): (.*)$/.exec(line);
  if (tagged) return new DaemonError(tagged[1]!, tagged[2]!);
  return new DaemonError("DaemonStartFailed", `the local daemon did not start${line ? `: ${line.slice("error: ".length)}` : ` (see ${file})`}`);
}

interface SpawnOptions {
  readonly env: Env;
  readonly cwd: string;
  readonly database?: string | undefined;
  readonly config?: string | null | undefined;
  readonly sandbox?: string | null | undefined;
  readonly progress?: ((progress: StartProgress) => void) | undefined;
  /** Start exactly this command line and environment (a previous daemon's, read from /proc) instead of this release. */
  readonly launch?: Launch | undefined;
}

/** How a running daemon was started: its command line and environment. */
interface Launch {
  readonly argv: readonly string[];
  readonly env: Record<string, string>;
}

/** The command line and environment of this user's process `pid` (Linux /proc), or undefined. */
function launchOf(pid: number): Launch | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((word) => word !== "");
    const env: Record<string, string> = {};
    for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
      const at = entry.indexOf("=");
      if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return argv.length > 0 ? { argv, env } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `serve --register` detached, its stdio on daemon.log; resolves once a live daemon is
 * registered. It waits as long as the daemon is alive and reporting: the 60 s start limit counts
 * from its latest sign of work (a log line, a backup copy that grew), and not at all while a
 * backup or migration step it reported is under way.
 */
async function spawnDaemon(files: DaemonFiles, options: SpawnOptions): Promise<Found> {
  ensureDirectory(files.directory);
  const offset = logSize(files.log);
  const fd = openSync(files.log, "a", 0o600);
  // The database travels in the environment, never in argv (a server URL may carry credentials).
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.env)) if (value !== undefined) env[key] = value;
  if (options.database !== undefined) env["ZE_HARNESS_DB"] = options.database;
  const args = [binaryPath(), "serve", "--register", ...(options.config ? ["--config", options.config] : []), ...(options.sandbox ? ["--sandbox", options.sandbox] : [])];
  const [command, ...argv] = options.launch ? options.launch.argv : [process.execPath, ...args];
  let exited = false;
  // Loaded here: only a command that starts the daemon spawns (a warm one never loads child_process).
  const { spawn } = await import("node:child_process");
  try {
    const child = spawn(command!, argv, { cwd: options.cwd, env: options.launch?.env ?? env, detached: true, stdio: ["ignore", fd, fd] });
    child.once("exit", () => (exited = true));
    child.once("error", () => (exited = true));
    child.unref();
  } finally {
    closeSync(fd);
  }
  const follower = new ProgressFollower(files.log, offset);
  let lastSign = Date.now();
  for (;;) {
    const { events, active } = follower.poll();
    if (active) lastSign = Date.now();
    for (const event of events) options.progress?.(event);
    const registration = readRegistration(files.registration);
    if (registration !== undefined && processOwned(registration.pid)) {
      // Ours, or a racing spawner's that won: either way one live daemon is registered.
      const found = await provenFound(files, registration);
      if (found !== undefined) return found;
    }
    if (exited) {
      // A spawner that lost the race exits once the winner is registered: look once more.
      const winner = readRegistration(files.registration);
      const found = winner === undefined ? undefined : await provenFound(files, winner);
      if (found !== undefined) return found;
      throw daemonError(files.log, offset);
    }
    if (!follower.busy && Date.now() - lastSign > START_TIMEOUT_MS) {
      throw new DaemonError("DaemonStartFailed", `the local daemon did not register or report progress within ${START_TIMEOUT_MS / 1000} s (see ${files.log})`);
    }
    await sleep(POLL_MS);
  }
}

/** A registered daemon that proved itself: what it answered. */
interface Found {
  readonly registration: Registration;
  readonly token: string;
  readonly status: DaemonStatus;
}

/** `registration` probed: when healthy, what it answered (its proof recorded for the next command, proof-cache.ts). */
async function provenFound(files: DaemonFiles, registration: Registration): Promise<Found | undefined> {
  const probed = await probe(files, registration);
  if (!probed.healthy) return undefined;
  recordProof(files, registration, probed.token, probed.status);
  return { registration, token: probed.token, status: probed.status };
}

/** The healthy registered daemon, or undefined (a stale registration is removed). */
async function registered(files: DaemonFiles): Promise<Found | undefined> {
  const registration = readRegistration(files.registration);
  if (registration === undefined) return undefined;
  const found = await provenFound(files, registration);
  if (found !== undefined) return found;
  removeStaleRegistration(files.registration, registration);
  return undefined;
}

interface Target {
  readonly url: string;
  readonly token: string;
}

/** `request` sent to `target`: its origin and bearer token, the rest as it was (the body already read). */
function sendTo(target: Target, request: HttpRequest): Promise<LightResponse> {
  const url = new URL(request.url);
  const base = new URL(target.url);
  url.protocol = base.protocol;
  url.host = base.host;
  return verifiedFetch({ ...request, url: url.href, headers: { ...request.headers, authorization: `Bearer ${target.token}` } });
}

/** The daemon's API fetch: undici's Request → Response, or the light ones (light-http.ts) alike. */
export interface DaemonFetch {
  (request: Request): Promise<Response>;
  (request: RequestLike): Promise<Response | LightResponse>;
}

const refused = (error: unknown): boolean => {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === "ECONNREFUSED" || code === FOREIGN_LISTENER;
};

/**
 * The API fetch of a connected command: the daemon's token on every request, and when the daemon
 * it reached is gone or was replaced (the connection refused, or 401: a new daemon has a new
 * token), the registered daemon found again — proven as a probe proves it — and the request sent
 * once more there. Neither answer means the first request took effect, so resending is safe.
 * A long-lived client (the TUI, `chat`) so outlives `service restart`. `reconnect` (a connection
 * made from a reused proof, proof-cache.ts) finds or starts a daemon when the first request is
 * refused and none is registered: what the probe would have done before that request.
 */
function followingFetch(files: DaemonFiles, first: Target, reconnect?: () => Promise<Target>): DaemonFetch {
  let current = first;
  let answered = false;
  const send = async (original: RequestLike): Promise<LightResponse> => {
    const request = await toHttpRequest(original);
    const target = current;
    let answer: LightResponse | undefined;
    let failure: unknown;
    try {
      answer = await sendTo(target, request);
      answered = true;
      if (answer.status !== 401) return answer;
    } catch (error) {
      if (!refused(error) || request.signal.aborted) throw error;
      failure = error;
    }
    if (reconnect !== undefined) forgetProof(files);
    const found = await registered(files);
    if (found === undefined && answer === undefined && !answered && reconnect !== undefined) {
      current = await reconnect();
      return sendTo(current, request);
    }
    if (found === undefined || (found.status.url === target.url && found.token === target.token)) {
      if (answer !== undefined) return answer;
      throw failure;
    }
    await answer?.body?.cancel();
    current = { url: found.status.url, token: found.token };
    return sendTo(current, request);
  };
  return (async (request: RequestLike) => {
    const answer = await send(request);
    return isLightRequest(request) ? answer : toWebResponse(answer);
  }) as DaemonFetch;
}

/** A connection to the daemon as a local command sees it: its status may be a reused proof's (no running Turns, no uptime). */
export type LocalEndpoint = Omit<DaemonEndpoint, "status"> & { readonly status: ProvenStatus };

/**
 * The shared daemon for a local API command (cli/base.ts): as connectDaemon, but a daemon proven
 * by an earlier command that still stands (proof-cache.ts: the same registration, token and
 * process) is used at once — no challenge, no status call. A daemon of an older release is
 * always probed (a handoff to this release needs its running Turns).
 */
export async function connectLocal(request: DaemonRequest): Promise<LocalEndpoint> {
  const files = daemonFiles(request.env);
  const registration = readRegistration(files.registration);
  const token = registration === undefined ? undefined : readToken(files.token);
  const status = registration === undefined || token === undefined ? undefined : provenStatus(files, registration, token);
  if (registration === undefined || token === undefined || status === undefined || !processOwned(registration.pid) || compareReleases(status.version, daemonRelease()) < 0) return connectDaemon(request);
  checkCompatible(request, status);
  const reconnect = async (): Promise<Target> => {
    const endpoint = await connectDaemon(request);
    return { url: endpoint.url, token: endpoint.token };
  };
  return { url: status.url, fetch: followingFetch(files, { url: status.url, token }, reconnect), token, status, spawned: false, sameRelease: status.version === daemonRelease() };
}

/** The shared daemon for a local command: the registered one, or a new one spawned for it. */
export async function connectDaemon(request: DaemonRequest): Promise<DaemonEndpoint> {
  const files = daemonFiles(request.env);
  let spawned = false;
  // The daemon a spawn just proved: not asked to prove itself a second time.
  let started: Found | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    const found = started ?? (await registered(files));
    started = undefined;
    if (found) {
      const { status, token } = found;
      if (!spawned && (await handOff(files, request, status))) continue;
      checkCompatible(request, status);
      if (spawned) request.progress?.({ kind: "done" });
      return { url: status.url, fetch: followingFetch(files, { url: status.url, token }), token, status, spawned, sameRelease: status.version === daemonRelease() };
    }
    if (!spawned) request.progress?.({ kind: "starting" });
    spawned = true;
    started = await spawnDaemon(files, { env: request.env, cwd: request.cwd, database: request.database, config: configIdentity(request.config, request.cwd), sandbox: request.sandbox, progress: request.progress });
  }
  throw new DaemonError("DaemonStartFailed", "the local daemon kept disappearing while starting");
}

/** A handoff to this release that failed: not retried until an explicit `service restart` succeeds. */
const handOffFailureFile = (files: DaemonFiles): string => join(files.directory, "handoff-failed.json");

function handOffFailed(files: DaemonFiles, release: string): boolean {
  try {
    return (JSON.parse(readFileSync(handOffFailureFile(files), "utf8")) as { release?: unknown }).release === release;
  } catch {
    return false;
  }
}

/** `service restart` succeeded: automatic handoffs may be tried again. */
export const clearHandOffFailure = (env: Env): void => rmSync(handOffFailureFile(daemonFiles(env)), { force: true });

/**
 * An idle daemon of an older release restarts onto this one (`Local daemon updated from <old> to
 * <new>.`) with its own database and config; a busy or newer one is left as it is. When this
 * release cannot start, the previous daemon is started again as it was (its command line and
 * environment, read before it stopped) so work can continue, and the reason is reported.
 * True when the daemon was restarted (onto either).
 */
async function handOff(files: DaemonFiles, request: DaemonRequest, status: DaemonStatus): Promise<boolean> {
  const mine = daemonRelease();
  if (request.env["ZE_HARNESS_DISABLE_AUTOUPDATE"] === "1" || compareReleases(status.version, mine) >= 0 || status.runningTurns.length > 0) return false;
  if (handOffFailed(files, mine)) return false;
  const previous = launchOf(status.pid);
  // The daemon decides idleness itself: a Turn started since `status` keeps it running, unchanged.
  if (!(await stopDaemon({ env: request.env, reason: "update", ifIdle: true })).stopped) return false;
  const options = { env: request.env, cwd: status.serverRoot, database: status.database, config: status.config, sandbox: status.sandbox, progress: request.progress };
  try {
    await spawnDaemon(files, options);
  } catch (error) {
    if (!(error instanceof DaemonError) || previous === undefined) throw error;
    writeFileSync(handOffFailureFile(files), `${JSON.stringify({ release: mine, from: status.version, reason: error.message })}\n`, { mode: 0o600 });
    await spawnDaemon(files, { ...options, launch: previous });
    request.notice?.(`Local daemon not updated from ${status.version} to ${mine}: ${error.message}. Restarted ${status.version} so work can continue; \`ze-harness service restart\` tries ${mine} again.`);
    return true;
  }
  request.notice?.(`Local daemon updated from ${status.version} to ${mine}.`);
  return true;
}

export type ServiceStatus = ({ readonly running: true } & DaemonStatus) | { readonly running: false };

export async function daemonStatus(env: Env): Promise<ServiceStatus> {
  const found = await registered(daemonFiles(env));
  return found ? { running: true, ...found.status } : { running: false };
}

export interface StopResult {
  /** A daemon was running. */
  readonly stopped: boolean;
  readonly pid?: number;
  /** The Turns that were running (and ended with host_shutdown). */
  readonly endedTurns: readonly RunningTurn[];
  /** How it ended: the shutdown request, SIGTERM, or SIGKILL after the grace period. */
  readonly via?: "shutdown" | "SIGTERM" | "SIGKILL";
  /** `ifIdle` and the daemon had running Turns: it was left running (these are they). */
  readonly busy?: readonly RunningTurn[];
}

async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/** Whether `pid` runs `serve --register` (true where its command line cannot be read). */
function daemonCommandLine(pid: number): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return true;
  }
  return argv.includes("serve") && argv.includes("--register");
}

const signal = (pid: number, name: NodeJS.Signals): void => {
  if (pid === process.pid) return; // a registration naming this very process is not a daemon to end
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
};

/**
 * Stops the registered daemon: `beforeStop` sees the running Turns it will end first; then the
 * shutdown request (202), else SIGTERM; a still-running, still-registered daemon is killed
 * after the grace period. Resolves once its process is gone and its registration reaped.
 */
export async function stopDaemon(options: {
  readonly env: Env;
  readonly reason?: string;
  readonly beforeStop?: (turns: readonly RunningTurn[]) => void;
  readonly graceMs?: number;
  /** Stop only a daemon without running Turns, as the daemon itself decides (never signalled otherwise). */
  readonly ifIdle?: boolean;
}): Promise<StopResult> {
  const files = daemonFiles(options.env);
  const registration = readRegistration(files.registration);
  if (registration === undefined || !processOwned(registration.pid)) {
    if (registration) removeStaleRegistration(files.registration, registration);
    return { stopped: false, endedTurns: [] };
  }
  const probed = await probe(files, registration);
  if (!probed.healthy && !daemonCommandLine(registration.pid)) {
    // Not proven, and its pid runs something else of this user's now: nothing to signal.
    removeStaleRegistration(files.registration, registration);
    return { stopped: false, endedTurns: [] };
  }
  const ending = probed.healthy ? probed.status.runningTurns : [];
  if (options.ifIdle === true && (!probed.healthy || ending.length > 0)) return { stopped: false, pid: registration.pid, endedTurns: [], busy: ending };
  options.beforeStop?.(ending);
  let via: StopResult["via"] = "shutdown";
  if (probed.healthy) {
    try {
      const answer = (await controlClient(registration.url, probed.token, { fetch: verifiedFetch }).mutate("shutdown", {
        reason: options.reason ?? "service stop",
        ...(options.ifIdle === true ? { ifIdle: true } : {}),
      })) as { accepted?: boolean; runningTurns?: readonly RunningTurn[] } | undefined;
      // A Turn started after the status read: the daemon refused and runs on.
      if (answer?.accepted === false) return { stopped: false, pid: registration.pid, endedTurns: [], busy: answer.runningTurns ?? [] };
    } catch (error) {
      if (!(error instanceof ControlError)) throw error;
      // An idle-only stop never falls back to a signal: the daemon's own check decides.
      if (options.ifIdle === true) return { stopped: false, pid: registration.pid, endedTurns: [], busy: [] };
      via = "SIGTERM";
    }
  } else via = "SIGTERM";
  if (via === "SIGTERM") signal(registration.pid, "SIGTERM");
  if (!(await exitedWithin(registration.pid, options.graceMs ?? STOP_GRACE_MS))) {
    const current = readRegistration(files.registration);
    if (current?.id === registration.id && current.pid === registration.pid) {
      signal(registration.pid, "SIGKILL");
      via = "SIGKILL";
      await exitedWithin(registration.pid, 5_000);
    }
  }
  // Reaped after the process is gone (a daemon removes its own on a clean exit).
  removeStaleRegistration(files.registration, registration);
  return { stopped: true, pid: registration.pid, endedTurns: ending, via };
}
