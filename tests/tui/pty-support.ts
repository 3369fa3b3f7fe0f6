// The per-test setup of the TUI suites that run the built binary in a PTY: the scripted test
// model (prompt directives on) configured as the home's global provider, the PTYs a test opens
// and an optional `serve` for --remote, all stopped after each test.
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startPty, type PtyCli } from "../support/pty.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";

export interface PtyTui {
  readonly model: TestModel;
  readonly home: TempHome;
  /** The built binary with `args` in a PTY in the home's root (stopped after the test). */
  pty(args: readonly string[], env?: Record<string, string>, size?: { readonly cols: number; readonly rows: number }): PtyCli;
  /** A real `serve` on its own database in the home (stopped after the test); its base URL. */
  serve(): Promise<string>;
}

export function ptyTuiPerTest(): PtyTui {
  let model: TestModel | undefined;
  let home: TempHome | undefined;
  let serve: ServeProcess | undefined;
  const started: PtyCli[] = [];
  beforeEach(async () => {
    model = await startTestModel({ directives: true });
    home = tempHome();
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  });
  afterEach(async () => {
    for (const cli of started.splice(0)) {
      cli.kill();
      await cli.exited;
    }
    await serve?.stop();
    serve = undefined;
    await model?.close();
    home?.cleanup();
  });
  const current = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("ptyTuiPerTest: used outside a test");
    return value;
  };
  return {
    get model() {
      return current(model);
    },
    get home() {
      return current(home);
    },
    pty(args, env, size) {
      const cli = startPty(args, { env: env ?? current(home).env, cwd: current(home).root, ...size });
      started.push(cli);
      return cli;
    },
    async serve() {
      const where = current(home);
      serve = await startServe(["--database", join(where.dir, "serve.db")], where.env, where.root);
      return serve.url;
    },
  };
}
