// oclif's help with the reference's FLAGS and GLOBAL FLAGS sections in the root help (package.json
// → oclif.helpClass; build-assets writes the root help through it, so the fast path prints the same).
import { Help } from "@oclif/core";
import { GLOBAL_FLAG_ROWS, ROOT_FLAG_ROWS } from "./global-flags.js";

/** One row per flag as the reference prints them (oclif's list would wrap the long choices). */
function rows(list: readonly (readonly [string, string])[]): string {
  const width = Math.max(...list.map(([name]) => name.length));
  return list.map(([name, description]) => `${name.padEnd(width)}    ${description}`).join("\n");
}

export default class ZeHelp extends Help {
  override formatRoot(): string {
    return [super.formatRoot(), this.section("FLAGS", rows(ROOT_FLAG_ROWS)), this.section("GLOBAL FLAGS", rows(GLOBAL_FLAG_ROWS))].join("\n\n");
  }
}
