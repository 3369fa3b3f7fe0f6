// The daemon's control plane: an internal tRPC router (@trpc/server 11, fetch adapter) mounted at
// `/_daemon/` beside the v1 Fetch handler, on the shared daemon's loopback listener only and
// behind the same bearer token. Not part of the public v1 contract (that stays the OpenAPI one):
// only this package's own `service` commands and daemon client call it, through the typed caller
// in control-client.ts (which imports this router's *type* only).
//
//   status        what is running: registration, release, database, config, uptime, running Turns
//   runningTurns  the Turns a stop would end
//   heartbeat     re-checks the registration now (the daemon also does every 10 s)
//   shutdown      202, then the host closes (running Turns end with host_shutdown); with
//                 `ifIdle` it refuses (`accepted: false`, the running Turns) while a Turn runs
//
// One path answers without the token: `GET /_daemon/challenge?nonce=N` proves this daemon holds
// it (challenge.ts) before a client sends it. Errors carry safe messages only (no stack traces).
import { initTRPC } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { z } from "zod";
import { checkHost, checkOrigin, checkToken, type GuardOptions } from "../http/guard.js";
import { CHALLENGE_PATH, challengeProof, validNonce } from "./challenge.js";

export const CONTROL_ENDPOINT = "/_daemon";

export interface RunningTurn {
  readonly sessionId: string;
  readonly turnId: string;
}

export interface DaemonStatus {
  readonly id: string;
  readonly version: string;
  readonly url: string;
  readonly pid: number;
  /** The boot id that prefixes this daemon's log lines. */
  readonly run: string;
  /** The database it opened: a file URL, `:memory:`, or a libSQL server URL without credentials. */
  readonly database: string;
  /** The `--config` file it started with (absolute), or null. */
  readonly config: string | null;
  /** The `--sandbox` mode it started with, or null (absent from daemons before the sandbox). */
  readonly sandbox?: string | null;
  /** Its server root: the directory it was started in. */
  readonly serverRoot: string;
  readonly startedAt: string;
  readonly uptimeMs: number;
  /** Its registration still names it (a replaced daemon shuts itself down). */
  readonly registered: boolean;
  readonly runningTurns: readonly RunningTurn[];
}

export interface DaemonControl {
  status(): DaemonStatus;
  runningTurns(): readonly RunningTurn[];
  /** Checks the registration now; starts a graceful shutdown when it names another daemon. */
  heartbeat(): { readonly registered: boolean; readonly checkedAt: string };
  /**
   * Starts a graceful shutdown once the acknowledgement is out; returns the Turns it will end.
   * `ifIdle`: only when no Turn runs — checked here, in the daemon, in the same step that starts
   * the shutdown, so a Turn started after a client's own check is never ended by it.
   */
  shutdown(reason: string, ifIdle?: boolean): { readonly accepted: boolean; readonly turns: readonly RunningTurn[] };
}

// isDev: false — tRPC otherwise puts the server's stack trace into every error body.
const t = initTRPC.context<{ readonly control: DaemonControl }>().create({
  isDev: false,
  errorFormatter: ({ shape }) => ({
    message: shape.data.code === "INTERNAL_SERVER_ERROR" ? "The daemon failed to handle the request" : shape.message,
    code: shape.code,
    data: { code: shape.data.code, httpStatus: shape.data.httpStatus },
  }),
});

export const daemonRouter = t.router({
  status: t.procedure.query(({ ctx }) => ctx.control.status()),
  runningTurns: t.procedure.query(({ ctx }) => ({ turns: ctx.control.runningTurns() })),
  heartbeat: t.procedure.query(({ ctx }) => ctx.control.heartbeat()),
  shutdown: t.procedure
    .input(z.object({ reason: z.string().min(1).max(200).optional(), ifIdle: z.boolean().optional() }).optional())
    .mutation(({ ctx, input }) => {
      const { accepted, turns } = ctx.control.shutdown(input?.reason ?? "service stop", input?.ifIdle === true);
      return accepted ? { accepted: true as const, endingTurns: turns } : { accepted: false as const, runningTurns: turns };
    }),
});

export type DaemonRouter = typeof daemonRouter;

const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The `/_daemon/*` handler: Host/Origin checks and the bearer token first, then the router. */
export function controlHandler(control: DaemonControl, guard: GuardOptions & { readonly token: string }): (request: Request) => Promise<Response> {
  return async (request) => {
    const host = checkHost(request, guard);
    if (!host.ok) return json(403, { _tag: "ForbiddenError", message: host.message });
    const origin = checkOrigin(request, guard);
    if (!origin.ok) return json(403, { _tag: "ForbiddenError", message: origin.message });
    const url = new URL(request.url);
    if (url.pathname === CHALLENGE_PATH) {
      if (request.method !== "GET") return json(405, { _tag: "ValidationError", message: "The challenge is a GET" });
      const nonce = url.searchParams.get("nonce");
      if (!validNonce(nonce)) return json(400, { _tag: "ValidationError", message: "nonce must be 22 to 128 base64url characters" });
      const { id, url: own } = control.status();
      return json(200, { id, proof: challengeProof(guard.token, { id, url: own, nonce }) });
    }
    const auth = checkToken(request, guard);
    if (!auth.ok) return json(401, { _tag: "UnauthorizedError", message: auth.message });
    return fetchRequestHandler({
      endpoint: CONTROL_ENDPOINT,
      req: request,
      router: daemonRouter,
      createContext: () => ({ control }),
      // The shutdown is acknowledged (202) before the host closes.
      responseMeta: ({ info, errors }) => (errors.length === 0 && info?.calls.some((call) => call.path === "shutdown") ? { status: 202 } : {}),
    });
  };
}
