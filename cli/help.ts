// oclif's help with the reference's GLOBAL FLAGS section in the root help (package.json →
// oclif.helpClass; build-assets writes the root help through it, so the fast path prints the same).
import { Help } from "@oclif/core";
import { GLOBAL_FLAG_ROWS } from "./global-flags.js";

export default class ZeHelp extends Help {
  override formatRoot(): string {
    const rows = GLOBAL_FLAG_ROWS.map(([name, description]) => [name, description]);
    const body = this.renderList(rows, { indentation: 2, spacer: "\n", stripAnsi: this.opts.stripAnsi });
    return `${super.formatRoot()}\n\n${this.section("GLOBAL FLAGS", body)}`;
  }
}
