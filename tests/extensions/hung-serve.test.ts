// A real `serve` behind plugins that never finish loading (real files in a temp dir): one whose
// module never finishes evaluating, one whose setup never settles. The listener used to open only
// after the setup limit (30 s) — or never, behind the module — because the host waited for its
// plugins before listening. Now it answers `/v1/health` at once and reports both plugins as not
// ready (`failed`, saying where each stands) while the generation activates.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { sdk } from "../../clients/index.js";
import { PENDING_MESSAGES } from "../../services/plugins/index.js";
import { ok } from "../support/calls.js";
import { assertBuilt } from "../support/cli.js";
import { processResources, serveWithModel } from "../turns/helpers.js";

// The hang guard: below the 30 s setup limit the listener used to wait for.
vi.setConfig({ testTimeout: 20_000 });
const resources = processResources("ze-hung-serve-");

describe("serve behind a hung plugin", () => {
  it("answers /v1/health at once and lists the hung plugins as not ready", async () => {
    assertBuilt();
    const { home, model, database } = await resources.setup();
    const neverLoads = join(home.dir, "never-loads.mjs");
    writeFileSync(neverLoads, `await new Promise(() => {});\nexport default { id: "never.loads", setup() {} };\n`);
    const neverSetsUp = join(home.dir, "never-setup.mjs");
    writeFileSync(neverSetsUp, `export default { id: "never.setup", setup() { return new Promise(() => {}); } };\n`);

    const served = await serveWithModel(home, model, database, { plugins: [neverLoads, neverSetsUp] });
    resources.cleanups.push(() => served.process.stop("SIGKILL"));
    expect(await ok(sdk.health({ client: served.api.client }))).toEqual({ status: "ok" });
    const { plugins } = await ok(sdk.plugins({ client: served.api.client }));
    expect(plugins).toEqual([
      { source: neverLoads, generationId: "host-1", status: "failed", registrations: [], error: PENDING_MESSAGES.current },
      { source: neverSetsUp, generationId: "host-1", status: "failed", registrations: [], error: PENDING_MESSAGES.waiting },
    ]);
    // A stop does not wait for the activation either.
    expect(await served.process.stop("SIGTERM")).not.toBeUndefined();
  });
});
