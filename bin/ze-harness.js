#!/usr/bin/env node
// Entry point (CommonJS: bin/package.json; ≈ 5 ms less start-up than an ES module).
// `--version` and the root `--help` are answered from files written at build time; everything
// else goes to the CLI bundle (dist/bundle/main.js), which loads only the command it runs — or,
// for a command line that starts with one of the commands listed in dist/bundle/local.json and
// asks for no help, to the one-file CommonJS fast path (dist/bundle/local.cjs, and for --embedded
// dist/bundle/embedded.cjs, each with its code cache: bin/local-cache.js).
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
} else if (localCommand(argv)) {
  // The commands a warm daemon answers most, from one CommonJS file (tools/bundle.mjs: local.cjs),
  // compiled with its V8 code cache when the build left a usable one beside it (./local-cache.js).
  require("./local-cache.js")
    .loadLocal(join(root, "dist", "bundle", "local.cjs"))
    .main(argv, root)
    .catch((error) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
} else {
  const { pathToFileURL } = require("node:url");
  import(pathToFileURL(join(root, "dist", "bundle", "main.js")).href)
    .then(({ main }) => main(argv, root))
    .catch((error) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}

/**
 * Whether the command line starts with a fast-path command (local.json) and asks for no help. With
 * --embedded, local.cjs loads the host from dist/bundle/embedded.cjs (with its own code cache).
 */
function localCommand(argv) {
  let commands;
  try {
    commands = JSON.parse(readFileSync(join(root, "dist", "bundle", "local.json"), "utf8"));
  } catch {
    return false;
  }
  if (!commands.includes(argv.slice(0, 2).join(":")) && !commands.includes(argv[0])) return false;
  const end = argv.indexOf("--");
  return !(end < 0 ? argv : argv.slice(0, end)).some((token) => token === "--help" || token === "-h");
}
