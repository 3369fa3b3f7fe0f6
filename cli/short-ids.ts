// Short ids: every argument or flag that names an existing Session, Turn or request accepts its
// full UUID or a unique prefix of at least 8 hex digits (`0beb6619`, also with the UUID's
// hyphens). The declarations here mark those arguments; the runtime (cli/runtime.ts) checks
// their form before anything is opened (a usage error naming what the user typed) and, once the
// command connects, resolves prefixes through the generated client's list operations: Sessions
// (every project), the Session's Turns, its pending interactions. No match, or more than one,
// is one `error:` line naming the value the user typed (and, when ambiguous, the matches).
import type { Connection } from "./base.js";
import { usageError } from "./errors.js";
import { arg, flag, type ArgSpec, type CommandSpec, type FlagSpec } from "./spec.js";

export type IdKind = "session" | "turn" | "permission" | "question";

const NOUNS: Record<IdKind, string> = { session: "Session", turn: "Turn", permission: "pending permission request", question: "pending question" };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The start of a UUID, hyphens where the UUID has them, at least 8 hex digits. */
const PREFIX = /^[0-9a-f]{8}(?:-[0-9a-f]{0,4}(?:-[0-9a-f]{0,4}(?:-[0-9a-f]{0,4}(?:-[0-9a-f]{0,12})?)?)?)?$/i;

/** Which kind of id each marked declaration names (the declarations stay plain data). */
const marked = new WeakMap<ArgSpec | FlagSpec, IdKind>();

function mark<S extends ArgSpec | FlagSpec>(kind: IdKind, spec: S): S {
  marked.set(spec, kind);
  return spec;
}

const described = (kind: IdKind): string => `${NOUNS[kind].replace(/^pending /, "")} id (a UUID, or a unique prefix of 8 or more hex digits)`;

/** SESSION_ID, TURN_ID or REQUEST_ID of an existing object. */
export function idArg(kind: IdKind, name: string, description: string) {
  return mark(kind, arg.string({ name, description: `${description} Its id or a unique prefix (8+ hex digits).`, required: true }));
}

/** An optional positional id (the TUI's SESSION_ID). */
export function optionalIdArg(kind: IdKind, name: string, description: string) {
  return mark(kind, arg.string({ name, description: `${description} Its id or a unique prefix (8+ hex digits).`, required: false }));
}

/** A flag naming an existing object (`--session`, `--resume`). */
export function idFlag(kind: IdKind, description: string) {
  return mark(kind, flag.string({ description: `${description} Its id or a unique prefix (8+ hex digits).` }));
}

/** The same declaration with a one-letter alias (`-s`), still marked. */
export function withChar<S extends FlagSpec>(spec: S, char: string): S {
  const kind = marked.get(spec);
  const aliased = { ...spec, char };
  return kind === undefined ? aliased : mark(kind, aliased);
}

interface Pending {
  readonly key: string;
  readonly kind: IdKind;
  readonly typed: string;
  readonly into: Record<string, unknown>;
}

/**
 * Checks every marked value's form (full UUIDs made canonical in place) and returns the
 * resolver of the prefixes, undefined when there are none. Throws a usage error for a value
 * that is neither a UUID nor a long enough hex prefix.
 */
export function checkShortIds(spec: CommandSpec, parsed: { readonly args: Record<string, unknown>; readonly flags: Record<string, unknown> }): ((connection: Connection) => Promise<void>) | undefined {
  const pending: Pending[] = [];
  const visit = (declarations: Record<string, ArgSpec | FlagSpec> | undefined, values: Record<string, unknown>): void => {
    for (const [key, declaration] of Object.entries(declarations ?? {})) {
      const kind = marked.get(declaration);
      const value = values[key];
      if (kind === undefined || typeof value !== "string") continue;
      if (UUID.test(value)) values[key] = value.toLowerCase();
      else if (PREFIX.test(value)) pending.push({ key, kind, typed: value, into: values });
      else throw usageError(`${JSON.stringify(value)} is not a ${described(kind)}`);
    }
  };
  visit(spec.args, parsed.args);
  visit(spec.flags, parsed.flags);
  if (pending.length === 0) return undefined;
  // Sessions first: a Turn or request prefix is looked up in its (resolved) Session.
  pending.sort((a, b) => Number(a.kind !== "session") - Number(b.kind !== "session"));
  return async (connection) => {
    // The client loads only here: commands without a prefix never pay for it.
    const { ZeClientError } = await import("../clients/index.js");
    for (const item of pending) {
      const sessionId = item.kind === "session" ? undefined : sessionOf(parsed);
      const candidates = await idsOf(connection, item.kind, sessionId);
      const picked = pick(item, candidates);
      if (typeof picked === "string") item.into[item.key] = picked;
      else throw new ZeClientError(picked.status, picked.body);
    }
  };
}

/** True for a value that is a short-id prefix (not a full UUID). */
export const isIdPrefix = (value: string): boolean => !UUID.test(value) && PREFIX.test(value);

/** Resolves one prefix `typed` of `kind` (a Turn or request within `sessionId`); throws the same errors as the arguments. */
export async function resolveIdPrefix(connection: Connection, kind: IdKind, typed: string, sessionId?: string): Promise<string> {
  const { ZeClientError } = await import("../clients/index.js");
  const picked = pick({ key: "", kind, typed, into: {} }, await idsOf(connection, kind, sessionId));
  if (typeof picked === "string") return picked;
  throw new ZeClientError(picked.status, picked.body);
}

function sessionOf(parsed: { readonly args: Record<string, unknown>; readonly flags: Record<string, unknown> }): string {
  const id = parsed.args["sessionId"] ?? parsed.flags["session"];
  if (typeof id !== "string") throw usageError("a Turn or request id prefix needs its Session");
  return id;
}

type Failure = { readonly status: number; readonly body: { readonly _tag: "NotFoundError" | "ConflictError"; readonly message: string } };

function pick(item: Pending, candidates: readonly string[]): string | Failure {
  const wanted = item.typed.toLowerCase();
  const matches = [...new Set(candidates.filter((id) => id.startsWith(wanted)))];
  if (matches.length === 1) return matches[0]!;
  const noun = NOUNS[item.kind];
  if (matches.length === 0) return { status: 404, body: { _tag: "NotFoundError", message: `no ${noun} id starts with ${JSON.stringify(item.typed)}` } };
  return { status: 409, body: { _tag: "ConflictError", message: `${JSON.stringify(item.typed)} matches ${matches.length} ${noun}s: ${matches.sort().join(", ")}; type more of the id` } };
}

/** Every id of `kind` the prefix may name, through the generated client. */
async function idsOf(connection: Connection, kind: IdKind, sessionId: string | undefined): Promise<string[]> {
  const { sdk, unwrap } = await import("../clients/index.js");
  const client = connection.client.client;
  const server = connection.server;
  if (kind === "session") return (await unwrap(sdk.listSessions({ client, path: { server } }))).sessions.map((session) => session.id);
  const path = { server, sessionId: sessionId! };
  if (kind === "turn") {
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await unwrap(sdk.listSessionTurns({ client, path, query: { limit: "100", ...(after !== undefined ? { afterSequence: after } : {}) } }));
      ids.push(...page.turns.map((entry) => entry.turn.id));
      if (page.nextAfterSequence === undefined || page.turns.length === 0) return ids;
      after = String(page.nextAfterSequence);
    }
  }
  const { interactions } = await unwrap(sdk.pendingInteractions({ client, path }));
  return interactions.filter((interaction) => interaction.kind === kind).map((interaction) => interaction.requestId);
}
