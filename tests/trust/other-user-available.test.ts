// The second-user attacks (tests/trust: the impostor daemon, the tokenless serve's 403, the
// half-open socket flood) need root and util-linux's setpriv, and run only where they are
// available. CI must be such a place: a CI that lost either would skip them silently.
import { describe, expect, it } from "vitest";
import { otherUserAvailable } from "../support/other-user.js";

describe("the other-user attacks", () => {
  it("run in CI (root with /usr/bin/setpriv)", () => {
    expect(process.env["CI"] !== "true" || otherUserAvailable).toBe(true);
  });
});
