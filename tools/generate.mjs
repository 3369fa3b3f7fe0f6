// npm run generate: spec/*.tsp → generated/ (OpenAPI 3.1, config JSON Schema,
// hey-api client, server route table, API reference page). Deterministic, so CI
// can regenerate and fail on any difference.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"] });

const scratch = mkdtempSync(join(tmpdir(), "ze-tsp-"));
try {
  run(bin("tsp"), ["compile", "spec/main.tsp", "--output-dir", scratch, "--warn-as-error"]);
  mkdirSync(join(root, "generated"), { recursive: true });
  const openapi = withHeadOperations(mapsAsAdditionalProperties(JSON.parse(readFileSync(join(scratch, "openapi", "openapi.json"), "utf8"))));
  writeFileSync(join(root, "generated", "openapi.json"), JSON.stringify(openapi, null, 2) + "\n");
  const config = JSON.parse(readFileSync(join(scratch, "json-schema", "config.schema.json"), "utf8"));
  writeFileSync(join(root, "generated", "config.schema.json"), JSON.stringify(config, null, 2) + "\n");
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

/**
 * TypeSpec writes a `Record<T>` as `unevaluatedProperties: T` in OpenAPI 3.1, which hey-api
 * 0.95 ignores (maps would decode as `Record<string, unknown>`). For a schema with no declared
 * properties both keywords mean the same, so maps are rewritten to `additionalProperties`.
 */
function mapsAsAdditionalProperties(node) {
  if (Array.isArray(node)) return node.map(mapsAsAdditionalProperties);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) out[key] = mapsAsAdditionalProperties(value);
  if (out.unevaluatedProperties !== undefined && out.properties === undefined && out.additionalProperties === undefined) {
    out.additionalProperties = out.unevaluatedProperties;
    delete out.unevaluatedProperties;
  }
  return out;
}

/**
 * The edge answers HEAD wherever it answers GET (services/http/handler.ts: the GET's status and
 * headers, Content-Length included, without the body; an event stream is ended unread). TypeSpec
 * has no way to derive one operation from another, so the document gains each GET's HEAD twin
 * here, by construction for every GET: `head<OperationId>`, the same parameters, security and
 * statuses, no content. The client and the route table skip them (a HEAD is served by its GET).
 */
function withHeadOperations(document) {
  for (const [path, item] of Object.entries(document.paths)) {
    const get = item.get;
    if (!get) continue;
    if (item.head) throw new Error(`${path} declares HEAD itself; the generator derives it from GET`);
    const responses = Object.fromEntries(
      Object.entries(get.responses).map(([status, response]) => [status, { description: response.description, ...(response.headers ? { headers: response.headers } : {}) }]),
    );
    const head = {
      operationId: `head${get.operationId.charAt(0).toUpperCase()}${get.operationId.slice(1)}`,
      summary: `Headers of: ${get.summary}`,
      description: `The status and headers \`GET ${path}\` would answer (Content-Length included), without its body.`,
      ...(get.parameters ? { parameters: get.parameters } : {}),
      responses,
      ...(get.tags ? { tags: get.tags } : {}),
      ...(get.security ? { security: get.security } : {}),
    };
    // Keys in a stable order: each HEAD right after its GET.
    document.paths[path] = Object.fromEntries(Object.entries(item).flatMap(([method, value]) => (method === "get" ? [[method, value], ["head", head]] : [[method, value]])));
  }
  return document;
}

// hey-api reads the document without the HEAD twins: no client call needs one, and leaving them
// out of its input (rather than filtering them) keeps its output exactly what it was before.
const clientInputDir = mkdtempSync(join(tmpdir(), "ze-openapi-ts-"));
try {
  const document = JSON.parse(readFileSync(join(root, "generated", "openapi.json"), "utf8"));
  for (const item of Object.values(document.paths)) delete item.head;
  const clientInput = join(clientInputDir, "openapi.json");
  writeFileSync(clientInput, JSON.stringify(document, null, 2) + "\n");
  execFileSync(bin("openapi-ts"), ["--file", "tools/openapi-ts.config.mjs"], { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ZE_OPENAPI_TS_INPUT: clientInput } });
} finally {
  rmSync(clientInputDir, { recursive: true, force: true });
}
run(process.execPath, ["tools/codegen/routes.mjs"]);

// Lazy zod schemas: hey-api builds all of generated/client/zod.gen.ts's schemas when the module
// is imported (≈ 25 ms of every start-up), though a command touches a handful. Each exported
// schema other than a bare alias becomes `z.lazy(() => …)`: built on its first use, cached after.
// zod's lazy is transparent to parsing, issues (paths, codes, union members), optionality and
// discriminator values, so every use in sdk.gen.ts and server/routes.ts is unchanged.
discriminatedUnions(join(root, "generated", "client", "zod.gen.ts"));
lazyZodSchemas(join(root, "generated", "client", "zod.gen.ts"));
// Lazy zod module: sdk.gen.ts imported zod.gen.ts (and so zod itself, ≈ 750 KB bundled, ≈ 60 ms
// to load) at its top, so every command paid for validators it may never run: a warm-daemon
// command skips response validation (clients/client.ts). The module is imported on the first
// validator call and its promise kept: an `import()` per call resolves the specifier again every
// time, which under a module loader (tsx, or any `--import` hook, whose resolve runs on a worker
// thread) cost ≈ 150 µs of CPU per call, three calls per Turn. What a validator checks and throws
// (a ZodError) is unchanged.
lazyZodImport(join(root, "generated", "client", "sdk.gen.ts"));

// Discriminated unions: hey-api writes a `oneOf` with a discriminator (every event stream, every
// tagged variant: 46 unions) as `z.union([z.object({ type: z.literal('a') }).and(zA), …])`, which
// parses the input against every member in turn, each an intersection that parses it twice and
// merges the results: ≈ 60–100 µs for one Turn event, on every event a validating client reads
// and every request body the server checks. Where each member is a plain object whose own
// discriminator property is required and holds exactly the one value the union names for it,
// the union becomes `z.discriminatedUnion('type', [zA, …])`: one lookup by the discriminator, one
// member parsed. The accepted inputs and the parsed values are the same (both strip unknown keys
// and keep the member's known ones); only the issues of a rejected input differ (a bad
// discriminator is reported at its own path). A union whose members do not all pass that check
// is left as it is.
function discriminatedUnions(file) {
  const source = readFileSync(file, "utf8");
  const statements = new Map([...source.matchAll(/^export const (z\w+) = ([\s\S]*?);\n(?=\n|$)/gm)].map(([, name, expression]) => [name, expression]));
  /** The plain-object statement a schema name stands for (through aliases), or undefined. */
  const objectOf = (name) => {
    for (let seen = 0; seen < 10; seen++) {
      const expression = statements.get(name);
      if (expression === undefined) return undefined;
      if (!/^z[A-Z]\w*$/.test(expression)) return /^z\.object\(\{\n[\s\S]*\n\}\)$/.test(expression) ? expression : undefined;
      name = expression;
    }
    return undefined;
  };
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  /** Whether the object's own (top-level, 4-space) property `key` is required and only `value`. */
  const holdsOnly = (object, key, value) => new RegExp(`^    ${escape(key)}: z\\.(?:enum\\(\\['${escape(value)}'\\]\\)|literal\\('${escape(value)}'\\)),?$`, "m").test(object);
  let rewritten = 0;
  let kept = 0;
  // One member: `z.object({ <key>: z.literal('<value>') }).and(<zName>),` (key, value and name captured).
  const member = /\s*z\.object\(\{\n\s*(\w+): z\.literal\('([^']*)'\)\n\s*\}\)\.and\((z\w+)\),?\n/g;
  const output = source.replace(/z\.union\(\[\n((?:\s*z\.object\(\{\n\s*\w+: z\.literal\('[^']*'\)\n\s*\}\)\.and\(z\w+\),?\n)+)(\s*)\]\)/g, (union, body, closingIndent) => {
    const members = [...body.matchAll(member)];
    const keys = new Set(members.map((match) => match[1]));
    const values = new Set(members.map((match) => match[2]));
    const sound = keys.size === 1 && values.size === members.length && members.every(([, key, value, name]) => {
      const object = objectOf(name);
      return object !== undefined && holdsOnly(object, key, value);
    });
    if (!sound) {
      kept += 1;
      return union;
    }
    rewritten += 1;
    const indent = closingIndent.replace(/^\n/, "") + "    ";
    return `z.discriminatedUnion('${[...keys][0]}', [\n${members.map(([, , , name]) => `${indent}${name}`).join(",\n")}\n${closingIndent.replace(/^\n/, "")}])`;
  });
  writeFileSync(file, output);
  console.log(`zod.gen.ts: ${rewritten} unions discriminated, ${kept} left as unions`);
}

function lazyZodSchemas(file) {
  const source = readFileSync(file, "utf8");
  let total = 0;
  let wrapped = 0;
  // Each top-level statement ends with `;` at the end of a line followed by a blank line (or EOF).
  const output = source.replace(/^export const (z\w+) = ([\s\S]*?);\n(?=\n|$)/gm, (_statement, name, expression) => {
    total += 1;
    if (/^z[A-Z]\w*$/.test(expression) || /^z\.enum\(\[[^\]]*\]\)$/.test(expression)) return `export const ${name} = ${expression};\n`;
    wrapped += 1;
    return `export const ${name} = z.lazy(() => ${expression});\n`;
  });
  const declared = [...source.matchAll(/^export const /gm)].length;
  if (total !== declared) throw new Error(`zod.gen.ts: wrapped ${total} of ${declared} exported schemas; the statement pattern no longer matches hey-api's output`);
  writeFileSync(file, output);
  console.log(`zod.gen.ts: ${wrapped} schemas lazy, ${total - wrapped} aliases and enums`);
}

function lazyZodImport(file) {
  const source = readFileSync(file, "utf8");
  const importLine = /^import \{ [^}]+ \} from '\.\/zod\.gen\.js';\n/m;
  if (!importLine.test(source)) throw new Error("sdk.gen.ts: no static import of ./zod.gen.js; hey-api's output changed");
  let count = 0;
  const loader =
    "\n// The zod schemas, imported on the first validator call (tools/generate.mjs).\n" +
    "let zodSchemasModule: Promise<typeof import('./zod.gen.js')> | undefined;\n" +
    "const zodSchemas = () => (zodSchemasModule ??= import('./zod.gen.js'));\n";
  const output = source
    .replace(importLine, "")
    .replace(/^(export type Options<)/m, `${loader.trimStart()}\n$1`)
    .replace(/Validator: async \(data\) => await (z\w+)\.parseAsync\(data\)/g, (_match, name) => {
      count += 1;
      return `Validator: async (data) => await (await zodSchemas()).${name}.parseAsync(data)`;
    });
  if (!output.includes("const zodSchemas = ")) throw new Error("sdk.gen.ts: no `export type Options<` to put the zod loader before; hey-api's output changed");
  if (/\bz[A-Z]\w*\.parse/.test(output.replace(/\(await zodSchemas\(\)\)\.z\w+\.parse/g, ""))) throw new Error("sdk.gen.ts: a zod schema is used outside the validator pattern; hey-api's output changed");
  writeFileSync(file, output);
  console.log(`sdk.gen.ts: ${count} validators import zod.gen.js lazily`);
}
