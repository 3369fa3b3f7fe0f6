// npm run build, after tsc: the CLI as a code-split esbuild bundle in dist/bundle/ (ESM, Node 20).
// Entries: cli/main.ts (what bin/ze-harness.js runs) and cli/commands.ts (oclif's command table,
// package.json → oclif.commands). Each command, the client and the embedded host are their own
// chunks, loaded by dynamic import only when a command line needs them. A second build writes the
// commands a warm daemon answers most as one CommonJS file, local.cjs (LOCAL_COMMANDS below), and a
// third the embedded host those commands load with --embedded, embedded.cjs; npm run build then
// writes each one's V8 code cache (tools/bundle-code-cache.mjs, bin/local-cache.js).
//
// zod keeps its English locale alone (zodEnglishOnly below); JSON modules are JSON.parse of a
// string (jsonAsParse below); React's packages are their production builds alone (reactProduction).
//
// Left external (resolved from node_modules at run time): native and optional packages
// (libsql, @libsql/*, @neon-rs/*, anything shipping a .node binary, ws's optional addons),
// oclif (only the slow path loads it, and it loads the command table by path), and ajv
// (services/config/validate.ts requires it through createRequire, beside its precompiled
// validator). Files read relative to a module: the precompiled validator is written into
// dist/bundle/ by tools/build-assets.mjs; generated/openapi.json and dist/reference.html are
// found from the package root (services/host/version.ts walks up to package.json).
//
// The generated client (generated/client/**) gets services/contract/light-http.ts's Headers and
// Request in place of the globals (lightHttp below): in Node 20 the globals load undici, ≈ 40 ms
// and ≈ 12 MiB of a warm-daemon command, whose node:http transport needs none of it. Outside the
// bundle (tests on the sources, the SDK) the generated client keeps the globals. Its SSE loop reads
// a light response's text straight from node:http (textReaderOf), not through web streams.
import { build } from "esbuild";
import { DYNAMIC_IMPORT_BANNER, routeDynamicImports } from "./bundle-route.mjs";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist", "bundle");

/** Every installed package with a native addon (a .node file), by package name. */
function nativePackages() {
  const found = new Set();
  const visit = (dir, name, depth) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isFile() && entry.name.endsWith(".node")) found.add(name);
      else if (entry.isDirectory() && entry.name !== "node_modules" && depth < 4) visit(join(dir, entry.name), name, depth + 1);
    }
  };
  const modules = join(root, "node_modules");
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    if (entry.name.startsWith("@")) {
      for (const scoped of readdirSync(join(modules, entry.name))) visit(join(modules, entry.name, scoped), `${entry.name}/${scoped}`, 0);
    } else visit(join(modules, entry.name), entry.name, 0);
  }
  return [...found];
}

// react-devtools-core: Ink imports it only when DEV=true (not installed).
const external = ["react-devtools-core", "libsql", "@libsql/*", "@neon-rs/*", "bufferutil", "utf-8-validate", "@oclif/core", "ajv", "ajv/*", "ajv-formats", ...nativePackages()];

/** The generated SSE loop's reader of an event stream's text (a web stream and TextDecoderStream). */
const SSE_READER = /if \(!response\.body\) throw new Error\('No body in SSE response'\);\s*const reader = response\.body\.pipeThrough\(new TextDecoderStream\(\)\)\.getReader\(\);/;

/**
 * Prefixes each generated client module with an import of the light classes under the global
 * names, and has the SSE loop read its text through textReaderOf (straight from node:http for a
 * light response: no web streams). A regenerated client whose SSE loop no longer reads that way
 * fails the build here rather than quietly loading web streams again.
 */
const lightHttp = {
  name: "light-http",
  setup(builder) {
    const module = join(root, "services", "contract", "light-http.ts");
    builder.onLoad({ filter: /[\\/]generated[\\/]client[\\/].*\.gen\.ts$/ }, (args) => {
      let source = readFileSync(args.path, "utf8");
      if (/[\\/]serverSentEvents\.gen\.ts$/.test(args.path)) {
        if (!SSE_READER.test(source)) throw new Error(`${args.path}: the SSE loop no longer reads response.body through TextDecoderStream; update tools/bundle.mjs (lightHttp)`);
        source = source.replace(SSE_READER, "const reader = textReaderOf(response);");
      }
      return {
        contents: `import { LightHeaders as Headers, LightRequest as Request, textReaderOf } from ${JSON.stringify(module)};\n${source}`,
        loader: "ts",
        resolveDir: dirname(args.path),
      };
    });
  },
};

/**
 * zod's namespace (`import { z } from "zod"`) re-exports every locale as `z.locales` and
 * `z.core.locales`, so esbuild keeps all ≈ 50 of them (≈ 400 KiB) in whatever chunk loads zod.
 * Only English is ever used (zod's schemas set it as the default on first construction; no code
 * here calls `z.config(z.locales.…)`), so zod's locales index becomes one that exports `en` alone.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), "..", "locales", "en.js"), namespace: "zod-locales" } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};\n`,
      loader: "js",
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * A JSON module (the models.dev catalog snapshot, 160 KiB; the config schema, 53 KiB) becomes
 * `JSON.parse` of one string instead of esbuild's object literal: V8 scans a string and parses
 * JSON several times faster than it compiles an object literal of that size (the snapshot:
 * ≈ 1.7 ms and 0.6 MiB against ≈ 9 ms and 2.5 MiB on every start that loads it).
 */
const jsonAsParse = {
  name: "json-as-parse",
  setup(builder) {
    // The project's own JSON modules only: a package's `require("./x.json")` keeps esbuild's
    // CommonJS-shaped value (some packages assign to it).
    builder.onLoad({ filter: /\.json$/ }, (args) => (/[\\/]node_modules[\\/]/.test(args.path) ? undefined : {
      contents: `export default JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(readFileSync(args.path, "utf8"))))});\n`,
      loader: "js",
    }));
  },
};

/**
 * React's entry files pick the development or the production build when they run
 * (`process.env.NODE_ENV === 'production'`), so esbuild keeps both in the TUI's chunk: ≈ 1 MiB of
 * development code (react-reconciler's alone is 750 KiB) read and parsed on every TUI launch, never
 * run (cli/commands/tui.ts sets NODE_ENV=production before React loads). In the bundle the test is
 * `true`, and esbuild leaves the development require out. (The TUI from the sources keeps honouring
 * NODE_ENV.)
 */
const reactProduction = {
  name: "react-production",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/](react|react-reconciler|scheduler)[\\/][\w.-]+\.js$/ }, (args) => ({
      contents: readFileSync(args.path, "utf8").replaceAll("process.env.NODE_ENV === 'production'", "true"),
      loader: "js",
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: "cli/main.ts", commands: "cli/commands.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  chunkNames: "chunk-[hash]",
  // The TUI's .tsx (React's automatic runtime; tsconfig.json says the same to tsc).
  jsx: "automatic",
  // CommonJS packages inside the bundle call require() for Node's built-ins.
  banner: { js: 'import { createRequire as __zeCreateRequire } from "node:module"; const require = __zeCreateRequire(import.meta.url);' },
  legalComments: "none",
  metafile: true,
  plugins: [lightHttp, zodEnglishOnly, jsonAsParse, reactProduction],
  logLevel: "warning",
});

/**
 * The fast path: the commands a warm local daemon answers most, as ONE CommonJS file
 * (dist/bundle/local.cjs) that bin/ze-harness.js require()s for a command line naming one of them
 * first (dist/bundle/local.json lists them) without --help. Node 20 loads CommonJS
 * without its ES module loader (≈ 10 ms to set up on this VM) and one file without the per-module
 * resolution of the ≈ 30 chunks such a command otherwise loads (≈ 20 ms): measured with
 * `ZE_BENCH_COMPARE` in tools/bench/daemon.mjs. Everything those commands import statically is
 * inside the file; so are the daemon client and clients/ (dynamic imports on their path). The
 * embedded host is loaded from embedded.cjs (below). Every other dynamic import (zod.gen's schemas,
 * the wizard, the other commands) is left to the split bundle's chunk for that module, found by the
 * metafile above; one with no chunk fails the build. The rest of the CLI (help, the TUI, chat)
 * loads as before.
 */
const LOCAL_COMMANDS = {
  run: "cli/commands/run.ts",
  "session:list": "cli/commands/session/list.ts",
  "session:show": "cli/commands/session/show.ts",
  "session:create": "cli/commands/session/create.ts",
  "session:delete": "cli/commands/session/delete.ts",
  "turn:list": "cli/commands/turn/list.ts",
  "turn:show": "cli/commands/turn/show.ts",
  "turn:cancel": "cli/commands/turn/cancel.ts",
};
/** The embedded host, which local.cjs loads from embedded.cjs (below), not from the split bundle. */
const embeddedEntry = join(root, "services", "host", "harness.ts");
const localInline = new Set([...Object.values(LOCAL_COMMANDS), "services/daemon/client.ts", "clients/index.ts"].map((file) => join(root, file)));
/**
 * What local.cjs and embedded.cjs start with: "use strict" first, the directive of the file's code
 * (bin/local-cache.js compiles the file as a function's body, as require() does): esbuild's own,
 * after the banner, is no directive, and the code, ES modules in their sources, would run sloppy.
 */
const ONE_FILE_BANNER = `"use strict";\nvar __zeImportMetaUrl = require("node:url").pathToFileURL(__filename).href;\n${DYNAMIC_IMPORT_BANNER}`;
/** The split build's chunk for each module it loads by dynamic import (source path → ./chunk-….js). */
const entryChunks = new Map();
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (output.entryPoint !== undefined) entryChunks.set(resolve(root, output.entryPoint), `./${basename(file)}`);
}
const localSplit = {
  name: "local-split",
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== "dynamic-import" || args.pluginData?.local) return undefined;
      const found = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { local: true } });
      if (found.errors.length > 0) return { errors: found.errors };
      if (found.external) return { path: args.path, external: true };
      if (localInline.has(found.path)) return { path: found.path };
      if (found.path === embeddedEntry) return { path: "./embedded.cjs", external: true };
      const chunk = entryChunks.get(found.path);
      if (chunk === undefined) return { errors: [{ text: `${args.path} (from ${args.importer}) has no chunk of its own in the split bundle for local.cjs to load` }] };
      return { path: chunk, external: true };
    });
  },
};
/**
 * One of the fast path's one-file CommonJS builds, dist/bundle/<name>.cjs, with its dynamic imports
 * routed and its text made ASCII (tools/bundle-route.mjs); `plugins` come before the shared ones.
 * Resolves with esbuild's metafile and how many import() calls were routed.
 */
async function commonJsFile(name, entry, plugins) {
  const built = await build({
    absWorkingDir: root,
    entryPoints: { [name]: entry },
    outdir,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    external,
    jsx: "automatic",
    // import.meta.url as an ES module in dist/bundle/ would see it (the file is beside the chunks).
    define: { "import.meta.url": "__zeImportMetaUrl" },
    banner: { js: ONE_FILE_BANNER },
    legalComments: "none",
    metafile: true,
    plugins: [...plugins, lightHttp, zodEnglishOnly, jsonAsParse, reactProduction],
    logLevel: "warning",
  });
  return { metafile: built.metafile, routed: routeDynamicImports(join(outdir, `${name}.cjs`)) };
}
const local = await commonJsFile("local", "cli/main.ts", [localSplit]);
writeFileSync(join(outdir, "local.json"), `${JSON.stringify(Object.keys(LOCAL_COMMANDS))}\n`);
const localBytes = Object.values(local.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`bundle: dist/bundle/local.cjs (${(localBytes / 1024).toFixed(0)} KiB, ${Object.keys(LOCAL_COMMANDS).length} commands)`);

/**
 * The embedded host (services/host/harness.ts, what `--embedded` loads) for the fast path, as ONE
 * CommonJS file too, dist/bundle/embedded.cjs, with its code cache: compiling the ≈ 80 chunks an
 * embedded one-shot otherwise loads as ES modules is ≈ 55 ms of its start. Every module it reaches,
 * by static or dynamic import, is inside the file (esbuild runs a dynamically imported module's top
 * level only when it is first imported), so the process holds one instance of each: a module shared
 * with a chunk would be two (two copies of a class, a registry or an AsyncLocalStorage). local.cjs
 * loads it through bin/local-cache.js; the ES-module CLI (the TUI, chat, help) keeps the chunks.
 */
const embedded = await commonJsFile("embedded", embeddedEntry, []);
const embeddedBytes = Object.values(embedded.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`bundle: dist/bundle/embedded.cjs (${(embeddedBytes / 1024).toFixed(0)} KiB, ${embedded.routed} import() left to the module loader)`);
// Their V8 code caches come next in npm run build, once tools/build-assets.mjs has written what
// they load (tools/bundle-code-cache.mjs).

const outputs = Object.entries(result.metafile.outputs);
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
console.log(`bundle: dist/bundle/ (${outputs.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB)`);
