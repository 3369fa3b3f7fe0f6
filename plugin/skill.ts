// `skill`: Skills, Skill sources and Skill transforms a plugin registers.

/** A Skill registered with `context.skills.register`; validated at activation. */
export interface SkillDeclaration {
  /** ≤ 128 characters `[a-z][a-z0-9]*([._-][a-z0-9]+)*`; the value passed to the `skill` Tool. */
  readonly id: string;
  /** Non-empty, trimmed, NFC text without control characters. */
  readonly displayName: string;
  /** Non-empty, single-line, trimmed, NFC text without control characters. */
  readonly description: string;
  /** Markdown with non-whitespace text, NFC, no carriage returns or control characters but tab and newline. */
  readonly body: string;
  /** Starts with a letter or digit, then letters, digits and `._+:-`. */
  readonly version: string;
  readonly modelAdvertisement: {
    readonly advertised: boolean;
    readonly userInvocable: boolean;
  };
  /** Kept in the catalog and passed to transforms; never sent to the model. */
  readonly publicMetadata: {
    readonly author?: string | undefined;
    /** Letters, digits, spaces and `.()+-`. */
    readonly license?: string | undefined;
    /** Canonical `https://` URL without credentials, query or fragment. */
    readonly homepage?: string | undefined;
    /** Unique lowercase identifiers. */
    readonly tags: readonly string[];
  };
  /** Unique lowercase relative paths of `[a-z0-9._/-]` without `.` or `..` segments. */
  readonly files?: readonly string[] | undefined;
}

/** One private HTTP header an HTTP Skill source sends. */
export interface SkillHttpHeader {
  readonly name: string;
  readonly value: string;
}

/** Loads Skills from the workspace when the plugin's scope activates. */
export interface WorkspaceSkillSource {
  readonly kind: "workspace";
  readonly id: string;
  readonly directory: string;
  /** `catalog` (default): `<directory>/catalog.json`; `directory`: scan for `SKILL.md` files. */
  readonly format?: "catalog" | "directory" | undefined;
}

/** Loads a Harness Skill catalog over HTTP when the plugin's scope activates. */
export interface HttpSkillSource {
  readonly kind: "http";
  readonly id: string;
  /** Canonical `http(s)://…/catalog.json`; `https://` when `headers` is not empty. */
  readonly catalogUrl: string;
  readonly headers: readonly SkillHttpHeader[];
}

export type SkillSource = WorkspaceSkillSource | HttpSkillSource;

/** A validated Skill as it appears in the catalog; transforms receive this value. */
export interface Skill {
  readonly id: string;
  readonly displayName: string;
  readonly description: string;
  readonly body: string;
  /** `ze-plugin:<pluginId>` for a plugin-registered Skill. */
  readonly baseLocation: string;
  readonly source: { readonly id: string; readonly kind: "plugin" | "workspace" | "http" };
  readonly version: { readonly skillVersion: string; readonly sourceVersion: string };
  readonly modelAdvertisement: SkillDeclaration["modelAdvertisement"];
  readonly publicMetadata: SkillDeclaration["publicMetadata"];
  /** Supporting-file paths relative to `baseLocation`, in lexical order. */
  readonly files: readonly string[];
}

/** Fields a Skill transform replaces; each present field replaces the whole current value. */
export interface SkillTransformPatch {
  readonly displayName?: string | undefined;
  readonly description?: string | undefined;
  readonly body?: string | undefined;
  /** Replaces `version.skillVersion`. */
  readonly version?: string | undefined;
  readonly modelAdvertisement?: SkillDeclaration["modelAdvertisement"] | undefined;
  readonly publicMetadata?: SkillDeclaration["publicMetadata"] | undefined;
}

/** Rewrites every Skill of the scope, in registration order, after all Skills loaded. */
export interface SkillTransform {
  /** Unique in its scope. */
  readonly id: string;
  /** The fields to replace, or `undefined` to keep the Skill. A throw fails activation. */
  readonly transform: (skill: Skill) => Promise<SkillTransformPatch | undefined>;
}
