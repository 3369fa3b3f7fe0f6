// The last pass over the one-file CommonJS builds (tools/bundle-route.mjs, run by tools/bundle.mjs
// on dist/bundle/local.cjs and embedded.cjs): every import() call but the banner's is routed to
// `__zeImport` (bin/local-cache.js's loader; code compiled by vm.Script has none of its own), an
// import( in a comment or a string is left alone, and every non-ASCII character is written as its
// \u escape where that keeps the meaning (a string, a RegExp, an untagged template, a comment),
// while one anywhere else fails the build instead of changing the program.
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM tool module without types
import { DYNAMIC_IMPORT_BANNER, routedSource } from "../../tools/bundle-route.mjs";

const file = "sample.cjs";

/** Runs routed CommonJS text, its `__zeImport` recording each specifier; resolves with what it exported. */
async function run(text: string): Promise<{ exports: Record<string, unknown>; imported: string[] }> {
  const imported: string[] = [];
  const module = { exports: {} as Record<string, unknown> };
  const __zeDynamicImport = (specifier: string): Promise<unknown> => {
    imported.push(specifier);
    return Promise.resolve({ specifier });
  };
  runInNewContext(text, { module, exports: module.exports, __zeDynamicImport });
  await (module.exports["done"] as Promise<unknown> | undefined);
  return { exports: module.exports, imported };
}

describe("routedSource", () => {
  it("routes every import() call after the banner's, a literal or a computed specifier, and no import( in a comment or a string", async () => {
    const text = [
      DYNAMIC_IMPORT_BANNER,
      "// import(\"./in-a-comment.js\") is not a call",
      'const url = "./computed.js";',
      'module.exports.note = "import(\\"./in-a-string.js\\")";',
      'module.exports.done = Promise.all([import("./literal.js"), import(url), import(`./template.js`)]);',
    ].join("\n");
    const routed = routedSource(file, text);
    expect(routed.routed).toBe(3);
    expect(routed.text.split("__zeImport(").length - 1).toBe(3);
    expect(routed.text).toContain('// import("./in-a-comment.js") is not a call');
    const { exports, imported } = await run(routed.text);
    expect(imported).toEqual(["./literal.js", "./computed.js", "./template.js"]);
    expect(exports["note"]).toBe('import("./in-a-string.js")');
  });

  it("writes non-ASCII characters as escapes with the same meaning: strings, RegExps (with and without u), untagged templates, comments", async () => {
    const text = [
      DYNAMIC_IMPORT_BANNER,
      "// a comment … with a wide character",
      'module.exports.string = "dots … and an emoji 😀";',
      "module.exports.regexp = /[\\ud800-￿]/.test(\"\\ufffe\") && !/[\\ud800-￿]/.test(\"é\");",
      "module.exports.unicode = /^😀$/u.test(\"😀\");",
      "const name = \"Ada\";",
      "module.exports.template = `hello ${name} — bye ${name} …`;",
    ].join("\n");
    const routed = routedSource(file, text);
    expect([...routed.text].every((character) => character.charCodeAt(0) < 0x80)).toBe(true);
    expect(routed.text).toContain("// a comment \\u2026 with a wide character");
    const { exports } = await run(routed.text);
    const expected = { string: "dots … and an emoji 😀", regexp: true, unicode: true, template: "hello Ada — bye Ada …" };
    expect((await run(text)).exports).toMatchObject(expected);
    expect(exports).toMatchObject(expected);
  });

  it("fails where an escape would change the program: a tagged template (its tag reads the raw text) or a name", () => {
    expect(() => routedSource(file, `${DYNAMIC_IMPORT_BANNER}\nmodule.exports.raw = String.raw\`a … b\`;`)).toThrow(/non-ASCII character at \d+ outside a string/);
    expect(() => routedSource(file, `${DYNAMIC_IMPORT_BANNER}\nconst x = 1;\nmodule.exports.raw = String.raw\`\${x} … b\`;`)).toThrow(/non-ASCII character/);
    expect(() => routedSource(file, `${DYNAMIC_IMPORT_BANNER}\nconst café = 1;\nmodule.exports.value = café;`)).toThrow(/non-ASCII character/);
  });

  it("fails where the escape would be read otherwise: a non-ASCII character escaped by a backslash (a RegExp's identity escape, which esbuild keeps as written), or a line separator between tokens (it ends a // comment)", async () => {
    // Each is the same program as itself unescaped; written as `\\u2019`, `\\u00e9` or `\u2028`
    // text, it would read a backslash and "u2019", or put the next statement inside the comment.
    const programs = ["module.exports.value = /[\\’]/.test(\"’\");", "module.exports.value = `a\\é` === \"aé\";", "// a comment\u2028module.exports.value = true;"];
    for (const program of programs) {
      const text = `${DYNAMIC_IMPORT_BANNER}\n${program}`;
      expect((await run(text)).exports["value"], program).toBe(true);
      expect(() => routedSource(file, text), program).toThrow(/non-ASCII character/);
    }
    // A backslash that is itself escaped leaves the character unescaped: that one is written as before.
    const escapedBackslash = `${DYNAMIC_IMPORT_BANNER}\nmodule.exports.value = /^\\\\’$/.test("\\\\’");`;
    expect((await run(escapedBackslash)).exports["value"]).toBe(true);
    expect((await run(routedSource(file, escapedBackslash).text)).exports["value"]).toBe(true);
  });

  it("fails when the file's first import() is not the banner's", () => {
    expect(() => routedSource(file, 'module.exports.done = import("./first.js");')).toThrow(/banner is not the file's first import/);
  });
});
