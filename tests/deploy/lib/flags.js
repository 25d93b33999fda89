// The command-line flags lm-server and lm-worker accept, so the manifests and Dockerfiles can be
// checked against them.
//
//   knownFlags("lm-server", {bin: "build/bin/lm-server", repo}) -> {flags: Set, source: "..."}
//
// From the program's --help (common/command_line.h prints "  --name ...") when the binary is
// built; otherwise from its sources: every CommandLine::Add*("name", ...) in the folders that
// define the program's flags.
"use strict";

const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

const SOURCE_DIRS = {
  "lm-server": ["server"],
  "lm-worker": ["worker/agent"],
};

function flagsFromHelp(bin) {
  // The programs print their usage on stderr and exit 0 (common/command_line.h).
  const run = spawnSync(bin, ["--help"], { encoding: "utf8", timeout: 10000 });
  if (run.error) throw new Error(`${bin} --help: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`${bin} --help exited ${run.status}: ${run.stderr}`);
  const flags = new Set();
  for (const line of `${run.stdout}\n${run.stderr}`.split("\n")) {
    const m = /^\s+--([A-Za-z0-9][A-Za-z0-9_-]*)/.exec(line);
    if (m) flags.add(m[1]);
  }
  return flags;
}

function* sourceFiles(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(p);
    else if (/\.(cc|h)$/.test(entry.name)) yield p;
  }
}

function flagsFromSources(program, repo) {
  const flags = new Set();
  const re = /\bAdd(?:String|Int|Double|Bool)\s*\(\s*"([A-Za-z0-9_-]+)"/g;
  for (const dir of SOURCE_DIRS[program] || []) {
    for (const file of sourceFiles(path.join(repo, dir))) {
      if (file.endsWith("command_line.h") || file.endsWith("command_line.cc")) continue;
      const text = fs.readFileSync(file, "utf8");
      for (const m of text.matchAll(re)) flags.add(m[1]);
    }
  }
  return flags;
}

function knownFlags(program, { bin, repo }) {
  if (bin && fs.existsSync(bin)) {
    const flags = flagsFromHelp(bin);
    if (flags.size === 0) throw new Error(`${bin} --help lists no flags`);
    return { flags, source: `${bin} --help` };
  }
  const flags = flagsFromSources(program, repo);
  if (flags.size === 0) throw new Error(`found no ${program} flag definitions under ${SOURCE_DIRS[program].join(", ")}`);
  return { flags, source: `${program}'s sources (${SOURCE_DIRS[program].join(", ")}; binary not built)` };
}

module.exports = { knownFlags, flagsFromHelp, flagsFromSources };
