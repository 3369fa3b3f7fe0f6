// Skill sources (`context.skills.registerSource`), read once when the plugin's scope activates:
// - workspace `catalog` (the default): `<directory>/catalog.json`, a Harness catalog
//   `{ schemaVersion: 1, version, skills: [{ body: "<id>/skill.md", files? }] }`, each `skill.md`
//   opening with `---`-delimited `key: value` lines (`id`, `name`, `description`, `version`,
//   `advertised`, `user-invocable`, optional `author`, `license`, `homepage`, JSON `tags`); `id`
//   must be the Skill's directory. Any invalid entry fails activation.
// - workspace `directory`: every standard `SKILL.md` (YAML frontmatter) in the tree; a malformed
//   or unreadable one is skipped with a warning; two with one name: the later path wins.
// - `http`: the catalog format over HTTP(S): redirects only within the catalog's origin, status
//   200, JSON catalogs and Markdown or plain-text bodies under the catalog's directory, the
//   source's private headers on every request (its supporting files are then not listed). Any
//   failure fails activation.
// Every Skill is checked with the rules of a registered one (declarations.ts `checkSkill`).
import { parseFrontmatter } from "../workspace/frontmatter.js";
import { parseSkillFile, SKILL_FILE } from "../workspace/skill-file.js";
import type { HttpSkillSource, Skill, SkillSource, WorkspaceFiles, WorkspaceSkillSource } from "../../plugin/index.js";
import { checkSkill, type Checked } from "./declarations.js";

const MAX_BODY_BYTES = 50 * 1024;
const MAX_CATALOG_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;
const MAX_SCAN_ENTRIES = 10_000;

export interface SkillSourceContext {
  readonly files: WorkspaceFiles;
  readonly signal: AbortSignal;
  /** A skipped file of a `directory` source. */
  readonly warn?: ((message: string) => void) | undefined;
  /** The fetch HTTP sources use (tests and embedders may pass their own). */
  readonly fetch?: typeof fetch | undefined;
}

const bad = (message: string): Checked<never> => ({ ok: false, message });

interface CatalogEntry {
  readonly body: string;
  readonly files: readonly string[];
}

/** A parsed `catalog.json`: its version and entries, or why it is not one. */
function parseCatalog(text: string, where: string): Checked<{ version: string; skills: CatalogEntry[] }> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad(`${where} is not JSON`);
  }
  const record = value as { schemaVersion?: unknown; version?: unknown; skills?: unknown };
  if (typeof value !== "object" || value === null || record.schemaVersion !== 1) return bad(`${where}: schemaVersion must be 1`);
  if (typeof record.version !== "string" || record.version === "") return bad(`${where}: version must be a non-empty string`);
  if (!Array.isArray(record.skills)) return bad(`${where}: skills must be an array`);
  const skills: CatalogEntry[] = [];
  for (const [index, raw] of record.skills.entries()) {
    const entry = raw as { body?: unknown; files?: unknown };
    if (typeof entry !== "object" || entry === null || typeof entry.body !== "string" || !/^[a-z0-9][a-z0-9._-]*\/[a-z0-9._-]+\.md$/.test(entry.body)) {
      return bad(`${where}: skills[${index}].body must be "<id>/<file>.md"`);
    }
    const files = entry.files ?? [];
    if (!Array.isArray(files) || !files.every((file) => typeof file === "string")) return bad(`${where}: skills[${index}].files must be a list of paths`);
    skills.push({ body: entry.body, files: files as string[] });
  }
  return { ok: true, value: { version: record.version, skills } };
}

/** One catalog `skill.md` as a Skill (its id must be its directory). */
function catalogSkill(text: string, entry: CatalogEntry, source: SkillSource, sourceVersion: string, baseLocation: string): Checked<Skill> {
  const parsed = parseFrontmatter(text);
  if (parsed._tag !== "Frontmatter") return bad(`${entry.body}: it does not start with ---`);
  const data = parsed.data;
  const directory = entry.body.slice(0, entry.body.indexOf("/"));
  if (data["id"] !== directory) return bad(`${entry.body}: id ${JSON.stringify(data["id"])} is not its directory ${JSON.stringify(directory)}`);
  const flag = (key: string): boolean | undefined => (data[key] === true || data[key] === "true" ? true : data[key] === false || data[key] === "false" ? false : undefined);
  const advertised = flag("advertised");
  const userInvocable = flag("user-invocable");
  if (advertised === undefined || userInvocable === undefined) return bad(`${entry.body}: advertised and user-invocable must be true or false`);
  const tags = typeof data["tags"] === "string" ? safeJson(data["tags"]) : (data["tags"] ?? []);
  const checked = checkSkill(
    {
      id: data["id"],
      displayName: data["name"],
      description: data["description"],
      body: parsed.body.trim(),
      version: typeof data["version"] === "number" ? String(data["version"]) : data["version"],
      modelAdvertisement: { advertised, userInvocable },
      publicMetadata: {
        ...(data["author"] !== undefined ? { author: data["author"] } : {}),
        ...(data["license"] !== undefined ? { license: data["license"] } : {}),
        ...(data["homepage"] !== undefined ? { homepage: data["homepage"] } : {}),
        tags,
      },
      files: entry.files.map((file) => (file.startsWith(`${directory}/`) ? file.slice(directory.length + 1) : file)),
    },
    source.id,
    sourceVersion,
  );
  if (!checked.ok) return bad(`${entry.body}: ${checked.message}`);
  return { ok: true, value: { ...checked.value, baseLocation, source: { id: source.id, kind: source.kind } } };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function workspaceCatalog(source: WorkspaceSkillSource, context: SkillSourceContext): Promise<Checked<Skill[]>> {
  const root = (await context.files.resolvePath({ filePath: source.directory })).canonicalPath;
  const read = (path: string) => context.files.readText({ filePath: `${root}/${path}`, maxBytes: MAX_BODY_BYTES, signal: context.signal });
  let catalogText: string;
  try {
    catalogText = (await read("catalog.json")).content;
  } catch {
    return bad(`${source.directory}/catalog.json cannot be read`);
  }
  const catalog = parseCatalog(catalogText, `${source.directory}/catalog.json`);
  if (!catalog.ok) return catalog;
  const skills: Skill[] = [];
  for (const entry of catalog.value.skills) {
    let body: string;
    try {
      body = (await read(entry.body)).content;
    } catch {
      return bad(`${source.directory}/${entry.body} cannot be read`);
    }
    const skill = catalogSkill(body, entry, source, catalog.value.version, `${root}/${entry.body.slice(0, entry.body.indexOf("/"))}`);
    if (!skill.ok) return skill;
    skills.push(skill.value);
  }
  return { ok: true, value: skills };
}

async function workspaceDirectory(source: WorkspaceSkillSource, context: SkillSourceContext): Promise<Checked<Skill[]>> {
  const root = (await context.files.resolvePath({ filePath: source.directory })).canonicalPath;
  const found = new Map<string, Skill>();
  let seen = 0;
  const visit = async (dir: string): Promise<void> => {
    let listing;
    try {
      listing = await context.files.readDirectory({ dirPath: dir, signal: context.signal });
    } catch {
      context.warn?.(`Skill source ${source.id}: ${dir} cannot be listed`);
      return;
    }
    for (const entry of listing.entries) {
      if (++seen > MAX_SCAN_ENTRIES) return;
      const path = `${dir}/${entry.name}`;
      if (entry.kind === "directory" && !entry.name.startsWith(".") && entry.name !== "node_modules") await visit(path);
      else if (entry.kind === "file" && entry.name === SKILL_FILE) {
        let text: string;
        try {
          text = (await context.files.readText({ filePath: path, maxBytes: MAX_BODY_BYTES, signal: context.signal })).content;
        } catch {
          context.warn?.(`Skill source ${source.id}: ${path} cannot be read`);
          continue;
        }
        const parsed = parseSkillFile(text.replace(/^\uFEFF/, ""));
        if (parsed._tag === "SkillMalformed") {
          context.warn?.(`Skill source ${source.id}: ${path} is skipped: ${parsed.message}`);
          continue;
        }
        const checked = checkSkill(
          { id: parsed.id, displayName: parsed.id, description: parsed.description, body: parsed.body === "" ? parsed.description : parsed.body, version: parsed.version, modelAdvertisement: { advertised: parsed.advertised, userInvocable: parsed.userInvocable }, publicMetadata: parsed.publicMetadata },
          source.id,
          "directory",
        );
        if (!checked.ok) {
          context.warn?.(`Skill source ${source.id}: ${path} is skipped: ${checked.message}`);
          continue;
        }
        // Listings are sorted: a later path with the same name replaces the earlier one.
        found.set(parsed.id, { ...checked.value, baseLocation: dir, source: { id: source.id, kind: "workspace" } });
      }
    }
  };
  await visit(root);
  return { ok: true, value: [...found.values()] };
}

async function httpCatalog(source: HttpSkillSource, context: SkillSourceContext): Promise<Checked<Skill[]>> {
  const doFetch = context.fetch ?? fetch;
  const catalogUrl = new URL(source.catalogUrl);
  const headers = Object.fromEntries(source.headers.map((header) => [header.name, header.value]));
  /** GETs `url` following redirects only inside the catalog's origin; the text, or why not. */
  const get = async (url: URL, accept: (type: string) => boolean): Promise<Checked<{ text: string; url: URL }>> => {
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      let response: Response;
      try {
        response = await doFetch(current, { headers, redirect: "manual", signal: context.signal });
      } catch {
        return bad(`${current.href} cannot be reached`);
      }
      if (response.status >= 300 && response.status < 400 && response.headers.get("location")) {
        await response.body?.cancel();
        const next = new URL(response.headers.get("location")!, current);
        if (next.origin !== catalogUrl.origin) return bad(`${current.href} redirects outside ${catalogUrl.origin}`);
        current = next;
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        return bad(`${current.href} answered HTTP ${response.status}`);
      }
      const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (!accept(type)) {
        await response.body?.cancel();
        return bad(`${current.href} is ${type || "of no content type"}`);
      }
      const text = await response.text();
      if (Buffer.byteLength(text) > MAX_CATALOG_BYTES) return bad(`${current.href} is larger than ${MAX_CATALOG_BYTES} bytes`);
      return { ok: true, value: { text, url: current } };
    }
    return bad(`${url.href} redirects more than ${MAX_REDIRECTS} times`);
  };
  const catalogText = await get(catalogUrl, (type) => type === "application/json");
  if (!catalogText.ok) return catalogText;
  // Bodies resolve against where the catalog was finally served from (its package directory).
  const directory = catalogText.value.url.href.slice(0, catalogText.value.url.href.lastIndexOf("/") + 1);
  const catalog = parseCatalog(catalogText.value.text, source.catalogUrl);
  if (!catalog.ok) return catalog;
  const skills: Skill[] = [];
  for (const entry of catalog.value.skills) {
    const url = new URL(entry.body, directory);
    if (!url.href.startsWith(directory)) return bad(`${entry.body} is outside ${directory}`);
    const body = await get(url, (type) => type === "text/markdown" || type === "text/plain");
    if (!body.ok) return body;
    const skill = catalogSkill(body.value.text, source.headers.length > 0 ? { ...entry, files: [] } : entry, source, catalog.value.version, new URL(entry.body.slice(0, entry.body.indexOf("/") + 1), directory).href);
    if (!skill.ok) return skill;
    skills.push(skill.value);
  }
  return { ok: true, value: skills };
}

/** The Skills one source provides, or why its plugin fails activation. */
export async function loadSkillSource(source: SkillSource, context: SkillSourceContext): Promise<Checked<Skill[]>> {
  try {
    if (source.kind === "http") return await httpCatalog(source, context);
    return source.format === "directory" ? await workspaceDirectory(source, context) : await workspaceCatalog(source, context);
  } catch (error) {
    return bad(`Skill source ${JSON.stringify(source.id)} cannot be loaded${error instanceof Error && /^[\w .,:'"-]{1,200}$/.test(error.message) ? `: ${error.message}` : ""}`);
  }
}
