// Static checks of deploy/docker/*.Dockerfile (Docker cannot run where the tests do). The build
// context is the repository root, as deploy/README.md's `docker build -f ... .` commands say.
//
//   parseDockerfile(text) -> [{line, instruction: "COPY", args: "...", flags: {from: "build"}}]
//   dockerfileErrors(file, repo) -> ["deploy/docker/x.Dockerfile:12: COPY source foo/ does not exist", ...]
//
// Checked: every COPY/ADD source taken from the build context exists in the repository and
// is not excluded by .dockerignore's simple patterns; every --from names an earlier stage;
// the final stage sets a USER that is not root; ENTRYPOINT/CMD are JSON arrays. The flags
// ENTRYPOINT + CMD pass to lm-server / lm-worker are returned for the flag check.
"use strict";

const fs = require("fs");
const path = require("path");

// Joins continuation lines, drops comments and blank lines.
function parseDockerfile(text) {
  const out = [];
  const lines = text.split("\n");
  let current = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const trimmed = raw.trim();
    if (current === null && (trimmed === "" || trimmed.startsWith("#"))) continue;
    if (current !== null && trimmed.startsWith("#")) continue;
    const continued = /\\\s*$/.test(raw);
    const piece = raw.replace(/\\\s*$/, "");
    if (current === null) current = { line: i + 1, text: piece };
    else current.text += " " + piece.trim();
    if (!continued) {
      const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(current.text);
      if (m) out.push({ line: current.line, instruction: m[1].toUpperCase(), ...splitFlags(m[2].trim()) });
      current = null;
    }
  }
  return out;
}

// "--from=build --chown=1:1 a b" -> {flags: {from: "build", chown: "1:1"}, args: "a b"}
function splitFlags(rest) {
  const flags = {};
  let args = rest;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S+))?\s*/.exec(args);
    if (!m) break;
    flags[m[1]] = m[2] === undefined ? "" : m[2];
    args = args.slice(m[0].length);
  }
  return { flags, args };
}

function jsonArray(args) {
  try {
    const v = JSON.parse(args);
    return Array.isArray(v) && v.every((x) => typeof x === "string") ? v : null;
  } catch {
    return null;
  }
}

function dockerignorePatterns(repo) {
  const file = path.join(repo, ".dockerignore");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !l.startsWith("!"));
}

// A simple matcher for .dockerignore's common forms: "name", "dir/", "prefix*/", "**/name".
function ignored(rel, patterns) {
  const parts = rel.replace(/\/+$/, "").split("/");
  for (let p of patterns) {
    p = p.replace(/\/+$/, "");
    const anyDepth = p.startsWith("**/");
    if (anyDepth) p = p.slice(3);
    const re = new RegExp("^" + p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*") + "$");
    if (anyDepth ? parts.some((x) => re.test(x)) : re.test(parts[0])) return true;
  }
  return false;
}

function dockerfileErrors(file, repo) {
  const rel = path.relative(repo, file);
  const errors = [];
  const fail = (line, msg) => errors.push(`${rel}:${line}: ${msg}`);
  const steps = parseDockerfile(fs.readFileSync(file, "utf8"));
  const patterns = dockerignorePatterns(repo);
  const stages = [];
  let user = null;
  let entrypoint = null;
  let cmd = null;
  for (const s of steps) {
    if (s.instruction === "FROM") {
      const m = /\s+AS\s+(\S+)\s*$/i.exec(s.args);
      stages.push(m ? m[1] : String(stages.length));
      user = null;
      entrypoint = null;
      cmd = null;
    } else if (s.instruction === "COPY" || s.instruction === "ADD") {
      const words = jsonArray(s.args) || s.args.split(/\s+/);
      if (words.length < 2) fail(s.line, `${s.instruction} needs a source and a destination`);
      if (s.flags.from !== undefined) {
        if (!stages.includes(s.flags.from)) fail(s.line, `${s.instruction} --from=${s.flags.from} names no earlier stage`);
        continue;
      }
      for (const src of words.slice(0, -1)) {
        if (/^https?:\/\//.test(src)) continue;
        const norm = path.posix.normalize(src);
        if (norm.startsWith("..") || path.isAbsolute(norm)) {
          fail(s.line, `${s.instruction} source ${src} is outside the build context`);
        } else if (!fs.existsSync(path.join(repo, norm))) {
          fail(s.line, `${s.instruction} source ${src} does not exist in the repository (build context: the repository root)`);
        } else if (norm !== "." && ignored(norm, patterns)) {
          fail(s.line, `${s.instruction} source ${src} is excluded by .dockerignore`);
        }
      }
    } else if (s.instruction === "USER") {
      user = s.args;
    } else if (s.instruction === "ENTRYPOINT" || s.instruction === "CMD") {
      const v = jsonArray(s.args);
      if (!v) fail(s.line, `${s.instruction} must be a JSON array (exec form, so signals reach the program)`);
      if (s.instruction === "ENTRYPOINT") entrypoint = v;
      else cmd = v;
    }
  }
  if (stages.length === 0) fail(1, "no FROM");
  if (!user) fail(steps.length ? steps[steps.length - 1].line : 1, "the final stage sets no USER (images must not run as root)");
  else if (/^(root|0)(:|$)/.test(user)) fail(1, `the final stage runs as ${user}`);
  const argv = [...(entrypoint || []), ...(cmd || [])];
  const program = argv.length ? argv[0].split("/").pop() : null;
  const flags = [];
  for (const a of argv.slice(1)) if (a.startsWith("--")) flags.push(a.slice(2).split("=")[0]);
  return { errors, program, flags };
}

module.exports = { parseDockerfile, dockerfileErrors, ignored };
