// What the v1 handler set gains on the shared daemon (and only there): `logs` reads daemon.log,
// and every admitted prompt leaves a `turn.submitted` line (server, session, turn, delivery,
// model when known, client id — never prompt text, tokens or argv). Every other host keeps
// `logs` as 503 service_unavailable (services/host/unavailable.ts).
import type { Handlers } from "../../generated/server/routes.js";
import { validationFailure } from "../contract/failure.js";
import type { RequestContext } from "../http/handler.js";
import { MAX_LOG_PAGE, type DaemonLog, type LogLevel } from "./log.js";

function pageLimit(value: string | undefined): number {
  if (value === undefined) return MAX_LOG_PAGE;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_LOG_PAGE) {
    throw validationFailure(`limit (/limit): must be an integer from 1 to ${MAX_LOG_PAGE}`);
  }
  return Number(value);
}

export function withDaemonLog(handlers: Handlers<RequestContext>, log: DaemonLog): Handlers<RequestContext> {
  return {
    ...handlers,
    logs: async ({ query }) => {
      const limit = pageLimit(query?.limit);
      const level = query?.level as LogLevel | undefined;
      return { status: 200, body: log.read({ limit, ...(level !== undefined ? { level } : {}) }) };
    },
    submitPrompt: async (input, context) => {
      const result = await handlers.submitPrompt(input, context);
      if (result.status === 202) {
        const receipt = result.body.receipt;
        log.info("turn.submitted", {
          server: input.path.server,
          session: input.path.sessionId,
          turn: receipt.turnId,
          delivery: receipt.delivery,
          model: input.body.delivery === "queue" ? input.body.model : undefined,
          clientId: input.headers["x-ze-harness-client-id"],
        });
      }
      return result;
    },
  };
}
