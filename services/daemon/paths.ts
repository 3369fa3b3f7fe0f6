// Where the shared local daemon keeps its state: `server.json` (the registration), the
// `daemon-token` bearer secret and `daemon.log`, all in the durable state directory
// (`$XDG_DATA_HOME/ze-harness` when XDG_DATA_HOME is absolute, else ~/.local/share/ze-harness).
// Light on purpose: the CLI's daemon path loads this and nothing of services/host.
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

export type Env = Readonly<Record<string, string | undefined>>;

export const REGISTRATION_FILE = "server.json";
export const TOKEN_FILE = "daemon-token";
export const LOG_FILE = "daemon.log";
/** The first port a daemon tries; it scans upwards from here. */
export const FIRST_PORT = 4096;
/** How many ports it tries before giving up. */
export const PORT_SCAN = 200;

const absolute = (value: string | undefined): string | undefined => (value !== undefined && value !== "" && isAbsolute(value) ? value : undefined);

/** The shared durable state directory (the same rule as services/config's stateDirectory). */
export function daemonDirectory(env: Env): string {
  const home = absolute(env["HOME"]) ?? homedir();
  return join(absolute(env["XDG_DATA_HOME"]) ?? join(home, ".local", "share"), "ze-harness");
}

export interface DaemonFiles {
  readonly directory: string;
  readonly registration: string;
  readonly token: string;
  readonly log: string;
}

export function daemonFiles(env: Env): DaemonFiles {
  const directory = daemonDirectory(env);
  return { directory, registration: join(directory, REGISTRATION_FILE), token: join(directory, TOKEN_FILE), log: join(directory, LOG_FILE) };
}
