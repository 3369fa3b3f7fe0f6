// The fuzzer's target in the test suite: a real in-process harness over a libSQL file database in
// a temp home, configured as tools/fuzz/target.ts says (the scripted test model, the real
// `everything` MCP server, `cat` as the shell). `send` is the fuzzer's in-process transport: a
// Request built from the fuzz request's bytes, answered by the harness's own Fetch handler (no
// contract wrapper: the fuzzer checks the contract itself).
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { UnsendableRequest, type FuzzRequest, type FuzzResponse, type Send } from "../../tools/fuzz/run.js";
import { answerEverything, FUZZ_ENV, fuzzConfig } from "../../tools/fuzz/target.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";
import { writeGlobalConfig } from "../support/model.js";

export interface FuzzTarget {
  readonly send: Send;
  readonly harness: TestHarness;
  /** Unexpected errors the harness reported (each one a 500 or a cut stream). */
  readonly unexpected: readonly { readonly operationId: string | undefined; readonly error: string }[];
  close(): Promise<void>;
}

/** A harness demanding `token` (the fuzzer sends it, and leaves it out or spoils it in its `auth` mutation). */
export async function startFuzzTarget(token?: string): Promise<FuzzTarget> {
  const model: TestModel = await startTestModel();
  answerEverything(model);
  const home = tempHome("ze-fuzz-");
  Object.assign(home.env, FUZZ_ENV);
  // A terminal opened without a command runs $SHELL of this process (not of the harness's env):
  // `cat` here too, so fuzzed input never reaches a real shell. Restored on close: test files share
  // a worker process (vitest.config.ts, isolate: false).
  const shellBefore = process.env["SHELL"];
  process.env["SHELL"] = FUZZ_ENV["SHELL"];
  writeGlobalConfig(home, fuzzConfig(model));
  const unexpected: { operationId: string | undefined; error: string }[] = [];
  const harness = await startHarness(
    {
      ...(token !== undefined ? { token } : {}),
      onUnexpectedError: (error, operationId) => unexpected.push({ operationId, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    },
    home,
  );
  const send: Send = async (fuzz: FuzzRequest): Promise<FuzzResponse> => {
    let request: Request;
    try {
      request = new Request(`http://localhost${fuzz.target}`, {
        method: fuzz.method,
        headers: fuzz.headers.map(([name, value]): [string, string] => [name, value]),
        ...(fuzz.body !== undefined ? { body: new Uint8Array(fuzz.body) } : {}),
      });
    } catch (error) {
      throw new UnsendableRequest(error instanceof Error ? error.message : String(error));
    }
    const response = await harness.harness.fetch(request);
    const headers = Object.fromEntries(response.headers);
    if ((headers["content-type"] ?? "").startsWith("text/event-stream")) {
      // A stream is checked by its status and headers; cancelling ends its subscriptions.
      await response.body?.cancel();
      return { status: response.status, headers };
    }
    return { status: response.status, headers, ...(response.body !== null ? { text: await response.text() } : {}) };
  };
  return {
    send,
    harness,
    unexpected,
    close: async () => {
      await harness.close();
      await model.close();
      if (shellBefore === undefined) delete process.env["SHELL"];
      else process.env["SHELL"] = shellBefore;
    },
  };
}
