#!/usr/bin/env node
// Entry point. `--version` and the root `--help` are answered from files written at
// build time, without loading oclif (≈ 250 ms of imports); everything else goes to oclif.
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);
const dist = new URL("../dist/", import.meta.url);

if (argv.length === 1 && argv[0] === "--version") {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`ze-harness/${manifest.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if ((argv.length === 0 || (argv.length === 1 && argv[0] === "--help")) && process.env.OCLIF_COLUMNS === undefined) {
  // The same text oclif prints when stdout is not a terminal (80 columns).
  process.stdout.write(readFileSync(new URL("cli/root-help.txt", dist), "utf8"));
} else {
  const { execute } = await import("@oclif/core");
  await execute({ args: argv, dir: import.meta.url });
}
