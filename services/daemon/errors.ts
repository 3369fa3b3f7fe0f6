// The daemon client's typed errors (printed by the CLI as `error: <_tag>: <message>`).

/** A daemon problem, printed by the CLI as `error: <_tag>: <message>`. */
export class DaemonError extends Error {
  constructor(
    readonly _tag: string,
    message: string,
  ) {
    super(message);
    this.name = _tag;
  }
}

/** The running daemon was started with another database, config or sandbox than asked for (`_tag` DaemonMismatch). */
export class DaemonOptionsMismatch extends DaemonError {
  constructor(message: string) {
    super("DaemonMismatch", message);
  }
}

/** The running daemon is another release than this package and was not handed off (busy, or newer). */
export class DaemonVersionMismatch extends DaemonError {
  constructor(
    readonly running: string,
    readonly wanted: string,
  ) {
    super("DaemonVersionMismatch", `the local daemon runs release ${running}, not ${wanted}: run \`ze-harness service restart\` once its Turns finished`);
  }
}
