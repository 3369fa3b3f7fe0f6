// YAML frontmatter of Markdown files (SKILL.md, Markdown agents): a `---` line, a YAML mapping,
// a closing `---` line, then the body.
//
// The delimiters must be the first line and a later line of their own (trailing spaces allowed;
// CRLF files work). The YAML is parsed by `yaml` with its defaults kept on purpose: duplicate keys
// are an error and aliases expand up to the parser's default limit, so a small file cannot
// balloon into a huge value. Errors come back as values, never thrown: discovery skips one bad
// file and keeps the rest.
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

// The parser loads on the first frontmatter block, not with every host (most runs have no Skill
// or Markdown agent files): `yaml` ships a CommonJS build, so a synchronous require serves here.
// A host that cannot require at run time (the Worker: no node_modules in workerd) installs the
// same parser once with `useYamlParser` (worker/skills.ts imports `yaml` statically).
let installed: typeof Yaml.parseDocument | undefined;
let yaml: typeof Yaml | undefined;
const parseDocument: typeof Yaml.parseDocument = (...args) =>
  installed !== undefined ? installed(...args) : (yaml ??= createRequire(import.meta.url)("yaml") as typeof Yaml).parseDocument(...args);

/** Installs `yaml`'s `parseDocument` instead of requiring it on first use. */
export function useYamlParser(parse: typeof Yaml.parseDocument): void {
  installed = parse;
}

/** The parsed mapping (`{}` for an empty block) and the text after the closing delimiter. */
export interface Frontmatter {
  readonly _tag: "Frontmatter";
  readonly data: Readonly<Record<string, unknown>>;
  /** Everything after the closing delimiter line, line endings normalized to `\n`. */
  readonly body: string;
}

/** The text does not start with a `---` line. */
export interface FrontmatterMissing {
  readonly _tag: "FrontmatterMissing";
}

/** A frontmatter block is present but unusable; `message` is one line. */
export interface FrontmatterInvalid {
  readonly _tag: "FrontmatterInvalid";
  readonly message: string;
}

export type FrontmatterResult = Frontmatter | FrontmatterMissing | FrontmatterInvalid;

const DELIMITER = /^---[ \t]*$/;

const firstLine = (message: string): string => message.split("\n")[0]!.trim();

/** Splits and parses the frontmatter of `text` (a BOM must already be removed). */
export function parseFrontmatter(text: string): FrontmatterResult {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  if (!DELIMITER.test(lines[0] ?? "")) return { _tag: "FrontmatterMissing" };
  const close = lines.findIndex((line, index) => index > 0 && DELIMITER.test(line));
  if (close === -1) return { _tag: "FrontmatterInvalid", message: "the frontmatter has no closing --- line" };
  const doc = parseDocument(lines.slice(1, close).join("\n"));
  const error = doc.errors[0];
  if (error !== undefined) return { _tag: "FrontmatterInvalid", message: `invalid YAML frontmatter: ${firstLine(error.message)}` };
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (cause) {
    // toJS throws when aliases expand past the parser's limit.
    return { _tag: "FrontmatterInvalid", message: `invalid YAML frontmatter: ${firstLine(cause instanceof Error ? cause.message : String(cause))}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) return { _tag: "FrontmatterInvalid", message: "the frontmatter is not a YAML mapping" };
  return { _tag: "Frontmatter", data: data as Record<string, unknown>, body: lines.slice(close + 1).join("\n") };
}
