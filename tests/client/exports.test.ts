// The client's prompt builders and protocol constants: images by URL and inline (bytes typed by
// their magic number), and the constants held to what the server and the MCP client really use.
import { describe, expect, it } from "vitest";
import {
  HARNESS_PROTOCOL_VERSION,
  imageBase64Prompt,
  imageUrlPrompt,
  MCP_PROTOCOL_VERSION,
  SERVER_VERSION_HEADER,
  sniffImageMime,
  textPrompt,
} from "../../clients/index.js";
import { PROTOCOL_VERSION, VERSION_HEADER } from "../../services/http/handler.js";
import { DEFAULT_PROTOCOL_VERSION } from "../../services/mcp/config.js";
import { createEmbeddedHarness } from "../../sdk/index.js";
import { startTestModel } from "../../tools/test-model/index.js";
import { harnessPerTest, tempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig } from "../support/model.js";
import { ONE_PIXEL_PNG } from "../support/png.js";

const bytes = (...values: (number | string)[]): Uint8Array =>
  new Uint8Array(values.flatMap((value) => (typeof value === "string" ? [...value].map((c) => c.charCodeAt(0)) : [value])));

const PNG = bytes(0x89, "PNG\r\n\x1a\n", 0, 0, 0, 13);
const JPEG = bytes(0xff, 0xd8, 0xff, 0xe0);
const GIF = bytes("GIF89a", 1, 0);
const WEBP = bytes("RIFF", 0, 0, 0, 0, "WEBPVP8 ");

describe("sniffImageMime", () => {
  it("tells JPEG, PNG, GIF and WebP by their bytes, and nothing else", () => {
    expect([PNG, JPEG, GIF, WEBP, bytes("GIF87a")].map(sniffImageMime)).toEqual(["image/png", "image/jpeg", "image/gif", "image/webp", "image/gif"]);
    expect(sniffImageMime(bytes("RIFF", 0, 0, 0, 0, "WAVE"))).toBeUndefined();
    expect(sniffImageMime(bytes("%PDF-1.7"))).toBeUndefined();
    expect(sniffImageMime(new Uint8Array())).toBeUndefined();
  });
});

describe("image prompts", () => {
  it("imageUrlPrompt: the text, then the image", () => {
    expect(imageUrlPrompt("What is this?", "https://example.test/a.png")).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "url", url: "https://example.test/a.png" } },
    ]);
    expect(imageUrlPrompt("", "https://example.test/a.png")).toHaveLength(1);
    expect(() => imageUrlPrompt("x", "")).toThrow(TypeError);
  });

  it("imageBase64Prompt: base64 with its type, or bytes typed by sniffing", () => {
    expect(imageBase64Prompt("Look", { mimeType: "image/gif", data: "R0lG" })).toEqual([
      { type: "text", text: "Look" },
      { type: "image", source: { type: "base64", mimeType: "image/gif", data: "R0lG" } },
    ]);
    expect(imageBase64Prompt("Look", PNG)[1]).toEqual({ type: "image", source: { type: "base64", mimeType: "image/png", data: Buffer.from(PNG).toString("base64") } });
    expect(() => imageBase64Prompt("x", bytes("%PDF"))).toThrow(/not a JPEG, PNG, GIF or WebP/);
    expect(() => imageBase64Prompt("x", { mimeType: "image/bmp" as never, data: "Qk0=" })).toThrow(/mimeType must be one of/);
    expect(() => imageBase64Prompt("x", { mimeType: "image/png", data: "" })).toThrow(TypeError);
    expect(textPrompt("hi")).toEqual([{ type: "text", text: "hi" }]);
  });

  it("a Turn sends the built prompt's image to the model", async () => {
    const model = await startTestModel();
    const home = tempHome();
    const harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", config: { model: TEST_MODEL, providers: testProviderConfig(model) }, env: home.env });
    try {
      model.enqueue({ events: [{ type: "text", text: "A pixel." }] });
      const session = await harness.createSession();
      const turnId = crypto.randomUUID();
      await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: imageBase64Prompt("What is this?", new Uint8Array(ONE_PIXEL_PNG)) });
      expect((await harness.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed", text: "A pixel." });
      expect(JSON.stringify(model.requests.at(-1)!.body)).toContain(`data:image/png;base64,${ONE_PIXEL_PNG.toString("base64")}`);
    } finally {
      await harness.close();
      await model.close();
      home.cleanup();
    }
  });
});

describe("protocol constants", () => {
  it("are the header, protocol and MCP revision the harness really uses", () => {
    expect(SERVER_VERSION_HEADER).toBe(VERSION_HEADER);
    expect(HARNESS_PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
    expect(MCP_PROTOCOL_VERSION).toBe(DEFAULT_PROTOCOL_VERSION);
  });

  const h = harnessPerTest();
  it("every response carries SERVER_VERSION_HEADER starting with HARNESS_PROTOCOL_VERSION", async () => {
    const response = await h().fetch(new Request("http://localhost/v1/health"));
    expect(response.headers.get(SERVER_VERSION_HEADER)).toMatch(new RegExp(`^${HARNESS_PROTOCOL_VERSION}/\\d+\\.\\d+\\.\\d+`));
  });
});
