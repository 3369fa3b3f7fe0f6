#!/usr/bin/env node
// Entry point (CommonJS: bin/package.json; ≈ 5 ms less start-up than an ES module).
// `--version` and the root `--help` are answered from files written at build time; everything
// else goes to the CLI bundle (dist/bundle/main.js), which loads only the command it runs.
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..");
const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  process.stdout.write(`ze-harness/${manifest.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (
  ((argv.length === 0 && !(process.stdin.isTTY && process.stdout.isTTY)) || (argv.length === 1 && argv[0] === "--help")) &&
  process.env.OCLIF_COLUMNS === undefined
) {
  // The same text oclif prints when stdout is not a terminal (80 columns). A bare `ze-harness`
  // on a terminal opens the TUI instead (cli/main.ts).
  process.stdout.write(readFileSync(join(root, "dist", "cli", "root-help.txt"), "utf8"));
} else {
  const { pathToFileURL } = require("node:url");
  import(pathToFileURL(join(root, "dist", "bundle", "main.js")).href)
    .then(({ main }) => main(argv, root))
    .catch((error) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
