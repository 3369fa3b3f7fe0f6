// Helpers for calling the generated SDK in tests: `ok` returns the data of a successful
// call, `failure` the ZeClientError of a failed one. A ContractViolation raised by
// contractFetch (or any other thrown error) surfaces as itself, never as an expected failure.
import { unwrap, ZeClientError } from "../../clients/index.js";

type Result<Data> = { data?: Data; error?: unknown; response?: Response };
type Call<Data> = Promise<Result<Data>>;

async function settle<Data>(call: Call<Data>): Promise<Result<Data>> {
  const result = await call;
  // The generated client returns thrown fetch errors (e.g. a ContractViolation) as `error`.
  if (result.error instanceof Error) throw result.error;
  return result;
}

/** The data of a call that must succeed. */
export async function ok<Data>(call: Call<Data>): Promise<Data> {
  const result = await settle(call);
  return unwrap(Promise.resolve(result));
}

/** The typed failure of a call that must fail: `{ status, body }` for readable assertions. */
export async function failure(call: Call<unknown>): Promise<{ status: number; body: ZeClientError["body"] }> {
  const result = await settle(call);
  try {
    await unwrap(Promise.resolve(result));
  } catch (error) {
    if (error instanceof ZeClientError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error(`expected the call to fail, but it answered ${result.response?.status}: ${JSON.stringify(result.data)}`);
}

/**
 * Returns once Date.now() has moved past `after`. Timestamps have millisecond resolution,
 * so a test that asserts "updatedAt changed" or "createdAt did not change" must first make
 * sure a later write would get a different timestamp — otherwise it could not fail.
 */
export function clockPast(after: number): void {
  const deadline = after + 1_000;
  for (;;) {
    const now = Date.now();
    if (now > after) return;
    if (now > deadline) throw new Error("the clock did not advance");
  }
}
