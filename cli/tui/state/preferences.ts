// model-preferences.json in the durable state directory ($XDG_DATA_HOME/ze-harness when
// XDG_DATA_HOME is absolute, else ~/.local/share/ze-harness): favorite models, recent models
// (newest first), per-model reasoning effort, whether first-run tips are hidden and whether the
// mouse is left to the terminal (`/mouse off`). Written
// atomically (temp file + rename); an unreadable file counts as empty preferences.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { ReasoningEffort } from "../../../clients/index.js";
import { makeDirectorySync } from "../../../services/contract/directory.js";

export interface ModelPreferences {
  favorites: string[];
  recent: string[];
  efforts: Record<string, ReasoningEffort>;
  hideTips: boolean;
  /** `/mouse off`: no mouse capture, the terminal selects and scrolls. */
  mouseOff: boolean;
}

const RECENT_LIMIT = 10;

export function stateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const data = env["XDG_DATA_HOME"];
  const base = data && isAbsolute(data) ? data : join(env["HOME"] || homedir(), ".local", "share");
  return join(base, "ze-harness");
}

export class Preferences {
  private value: ModelPreferences;
  readonly file: string;

  constructor(directory: string = stateDirectory()) {
    this.file = join(directory, "model-preferences.json");
    this.value = Preferences.read(this.file);
  }

  private static read(file: string): ModelPreferences {
    try {
      const raw = JSON.parse(readFileSync(file, "utf8")) as Partial<ModelPreferences>;
      return {
        favorites: Array.isArray(raw.favorites) ? raw.favorites.filter((item) => typeof item === "string") : [],
        recent: Array.isArray(raw.recent) ? raw.recent.filter((item) => typeof item === "string") : [],
        efforts: typeof raw.efforts === "object" && raw.efforts !== null ? raw.efforts : {},
        hideTips: raw.hideTips === true,
        mouseOff: raw.mouseOff === true,
      };
    } catch {
      return { favorites: [], recent: [], efforts: {}, hideTips: false, mouseOff: false };
    }
  }

  get(): Readonly<ModelPreferences> {
    return this.value;
  }

  toggleFavorite(model: string): void {
    const favorites = this.value.favorites.includes(model) ? this.value.favorites.filter((item) => item !== model) : [...this.value.favorites, model];
    this.save({ favorites });
  }

  used(model: string): void {
    this.save({ recent: [model, ...this.value.recent.filter((item) => item !== model)].slice(0, RECENT_LIMIT) });
  }

  setEffort(model: string, effort: ReasoningEffort | undefined): void {
    const efforts = { ...this.value.efforts };
    if (effort === undefined) delete efforts[model];
    else efforts[model] = effort;
    this.save({ efforts });
  }

  setHideTips(hideTips: boolean): void {
    this.save({ hideTips });
  }

  setMouseOff(mouseOff: boolean): void {
    this.save({ mouseOff });
  }

  private save(patch: Partial<ModelPreferences>): void {
    this.value = { ...this.value, ...patch };
    const directory = join(this.file, "..");
    makeDirectorySync(directory, 0o700);
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(this.value, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}
