// Which URLs a Worker `Bundle` plugin source may name (worker/plugins-url.ts): credential-free
// https; loopback http only with the test and development knob, and only for a whole loopback
// host name. Each refusal is a 400 ValidationError that does not echo the URL.
import { describe, expect, it } from "vitest";
import { isFailure } from "../../services/contract/failure.js";
import { checkBundleUrl } from "../../worker/plugins-url.js";

function refusal(text: string, allowLoopbackHttp: boolean): { tag: string; message: string } {
  try {
    checkBundleUrl(text, allowLoopbackHttp);
  } catch (error) {
    if (!isFailure(error)) throw error;
    return { tag: error.body._tag, message: error.body.message };
  }
  throw new Error(`${text} was accepted`);
}

describe("Bundle plugin source URLs on the Worker", () => {
  it("accepts credential-free https URLs, with or without the knob", () => {
    expect(checkBundleUrl("https://plugins.example.com/notes.js", false).href).toBe("https://plugins.example.com/notes.js");
    expect(checkBundleUrl("https://plugins.example.com/notes.js?v=2", true).hostname).toBe("plugins.example.com");
  });

  it("accepts loopback http only with the knob", () => {
    for (const url of ["http://127.0.0.1:8080/p.js", "http://127.1.2.3/p.js", "http://localhost/p.js", "http://[::1]:9000/p.js"]) {
      expect(checkBundleUrl(url, true).protocol).toBe("http:");
      expect(refusal(url, false).tag).toBe("ValidationError");
    }
  });

  it("refuses other schemes, other http hosts (look-alikes included), credentials and non-URLs without echoing them", () => {
    for (const url of [
      "http://plugins.example.com/p.js",
      "http://127.0.0.1.example.com/p.js",
      "http://localhost.example.com/p.js",
      "http://10.0.0.1/p.js",
      "ftp://127.0.0.1/p.js",
      "file:///workspace/p.js",
      "data:text/javascript,export default 1",
      "https://user:secret-token@plugins.example.com/p.js",
      "not a url secret-token",
    ]) {
      const refused = refusal(url, true);
      expect(refused.tag).toBe("ValidationError");
      expect(refused.message).not.toContain("secret-token");
    }
  });
});
