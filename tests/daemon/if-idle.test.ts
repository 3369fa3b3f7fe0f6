// `service restart --if-idle` (the installers' and `update`'s finishing step) and the automatic
// handoff stop only an idle daemon, and the daemon itself decides: its control plane's
// `shutdown` with `ifIdle` refuses while a Turn runs, in the same step that would start the
// shutdown, so a Turn started after a client's own status read is never ended by the restart.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { controlClient } from "../../services/daemon/control-client.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf } from "../support/cli.js";
import { alive, cleanupDaemonHome, daemonHome, type DaemonHome } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let model: TestModel;
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
});
afterAll(async () => {
  await model?.close();
});
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

describe("stopping only an idle daemon", () => {
  it("the daemon refuses an idle-only shutdown while a Turn runs and runs on; once the Turn is done, --if-idle restarts it", async () => {
    const h = (home = daemonHome(model));
    const started = jsonOf(await h.cli(["service", "start"]));
    let release: () => void = () => {};
    model.reply(() => new Promise((resolvePromise) => (release = () => resolvePromise({ events: [{ type: "text", text: "done after the refusal" }] }))));
    const before = model.requests.length;
    const turn = h.cli(["run", "a Turn the restart must not end"]);
    await model.waitForRequest(before + 1);

    // The control plane asked directly, as a client whose status read predates the Turn would.
    const refused = await controlClient(started.url as string, h.token()).mutate("shutdown", { reason: "test", ifIdle: true });
    expect(refused).toMatchObject({ accepted: false, runningTurns: [expect.objectContaining({ turnId: expect.any(String) })] });
    expect(alive(started.pid as number)).toBe(true);
    expect(h.log()).toMatch(/event=daemon\.shutdown_refused reason=test runningTurns=1/);

    const busy = await h.cli(["service", "restart", "--if-idle"]);
    expect(busy.code, busy.stderr).toBe(0);
    expect(busy.stderr).toContain("not restarting (--if-idle)");
    expect(jsonOf(busy)).toMatchObject({ restarted: false, pid: started.pid });

    release();
    const finished = await turn;
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain("done after the refusal");

    const restarted = jsonOf(await h.cli(["service", "restart", "--if-idle"]));
    expect(restarted).toMatchObject({ restarted: true, running: true });
    expect(restarted.pid).not.toBe(started.pid);
    expect(alive(started.pid as number)).toBe(false);
  });
});
