// Test entry for tests/worker/authority.test.ts: the Worker host itself (its gateway and both
// Durable Object classes) plus one test-only route, `GET /__test/keys?provider=ID`, that answers
// what `authorityProviderKeys(env)` — the server objects' key seam — resolves for a provider. It
// reveals the key so the test can tell a stored key from a Worker secret: a test fixture only,
// never part of the Worker.
import worker, { type WorkerEnv } from "../../worker/index.js";
import { authorityProviderKeys } from "../../worker/authority-routes.js";

export { HarnessServerObject, HarnessProviderAuthorityObject } from "../../worker/index.js";

export default {
  async fetch(request: Request, env: WorkerEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== "/__test/keys") return worker.fetch(request, env);
    const resolved = await authorityProviderKeys(env)(url.searchParams.get("provider") ?? "");
    return Response.json(resolved.ok ? { ok: true, origin: resolved.origin, key: resolved.key?.reveal() ?? null } : resolved);
  },
};
