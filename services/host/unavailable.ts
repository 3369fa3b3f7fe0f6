// Operations whose capability this build does not provide yet answer 503
// UnavailableError naming the missing capability — never a fake success.
import { routes, type Handlers, type OperationId } from "../../generated/server/routes.js";
import { unavailable } from "../contract/failure.js";

const CAPABILITY_BY_OPERATION: Partial<Record<OperationId, string>> = {
  logs: "daemon logs (only the shared daemon keeps a log)",
};

const CAPABILITY_BY_PREFIX: readonly [RegExp, string][] = [
  [/Model|^models$|^modelEvents$|Provider|^providers$/, "the model catalog and provider management"],
];

export function capabilityOf(operationId: OperationId): string {
  const direct = CAPABILITY_BY_OPERATION[operationId];
  if (direct) return direct;
  for (const [pattern, capability] of CAPABILITY_BY_PREFIX) if (pattern.test(operationId)) return capability;
  return "this operation";
}

/** A full handler set in which every operation reports its capability as unavailable. */
export function unavailableHandlers<Context>(): Handlers<Context> {
  const handlers: Record<string, () => Promise<never>> = {};
  for (const route of routes) {
    const capability = capabilityOf(route.operationId);
    handlers[route.operationId] = async () => {
      throw unavailable(`${route.operationId} is unavailable: ${capability} is not provided by this host yet`);
    };
  }
  return handlers as unknown as Handlers<Context>;
}
