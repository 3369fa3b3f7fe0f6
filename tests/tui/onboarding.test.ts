// Connect provider: Ctrl+X P opens it over the server's provider list. This build's server
// answers the provider operations with 503 (another branch implements them), so these tests
// cover what can honestly be covered here: the picker shows the server's refusal, and the
// masked API-key field never renders the key and reports the server's answer.
import { describe, expect, it } from "vitest";
import { KEY, tuiPerTest } from "./support.js";

const { open } = tuiPerTest();

describe("Connect provider", () => {
  it("Ctrl+X P opens the provider list and shows why the server cannot list providers", async () => {
    const tui = await open();
    await tui.press(KEY.ctrlX, "p");
    const frame = await tui.waitFor(/Connect provider[\s\S]*providers is unavailable/);
    expect(frame).toMatch(/Esc close/);
    await tui.press(KEY.escape);
    await tui.waitFor(/Ask anything/);
  });

  it("the API-key field shows bullets, never the key, and names the server's answer", async () => {
    const tui = await open();
    tui.controller.update({ overlay: { kind: "secret", providerId: "test", text: "" } });
    await tui.waitFor(/API key for test/);
    await tui.press("sk-secret-value");
    const masked = await tui.waitFor(/•{15}/);
    expect(masked).not.toContain("sk-secret-value");
    await tui.press(KEY.enter);
    const answered = await tui.waitFor(/connectProviderKey is unavailable/);
    expect(answered).not.toContain("sk-secret-value");
    expect(tui.frames().some((frame) => frame.includes("sk-secret"))).toBe(false);
    expect(JSON.stringify(tui.controller.state)).not.toContain("sk-secret-value");
  });
});
