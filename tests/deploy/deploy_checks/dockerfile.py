"""Static checks of deploy/docker/*.Dockerfile (Docker cannot run where the tests do). The build
context is the repository root, as deploy/README.md's `docker build -f ... .` commands say.

  parse_dockerfile(text) -> [Step(line=12, instruction="COPY", args="...", flags={"from": "build"})]
  dockerfile_errors(file, repo) -> (["deploy/docker/x.Dockerfile:12: COPY source foo/ does not exist", ...],
                                    program, flags)

Checked: every COPY/ADD source taken from the build context exists in the repository and is
not excluded by .dockerignore's simple patterns; every --from names an earlier stage; the final
stage sets a USER that is not root; ENTRYPOINT/CMD are JSON arrays; an image whose program is
lm-server or lm-worker copies lm-train into the same folder in one `cp` of the build stage
(both start lm-train from next to their own executable: lm-worker for jobs, lm-server for
Predict). The flags ENTRYPOINT + CMD pass to lm-server / lm-worker are returned for the flag
check.
"""
import json
import os
import posixpath
import re
from typing import NamedTuple

# A line's content up to its end (JavaScript's "." also stops at \r, \u2028 and \u2029).
_INSTRUCTION = re.compile(r"\s*([A-Za-z]+)\s*([^\n\r\u2028\u2029]*)")
_CONTINUED = re.compile(r"\\\s*\Z")
_FLAG = re.compile(r"--([a-z-]+)(?:=(\S+))?\s*")


class Step(NamedTuple):
    line: int
    instruction: str
    args: str
    flags: dict


def _split_flags(rest):
    """"--from=build --chown=1:1 a b" -> ({"from": "build", "chown": "1:1"}, "a b")."""
    flags = {}
    args = rest
    while True:
        m = _FLAG.match(args)
        if not m:
            break
        flags[m.group(1)] = m.group(2) if m.group(2) is not None else ""
        args = args[m.end():]
    return flags, args


def parse_dockerfile(text):
    """Joins continuation lines, drops comments and blank lines."""
    out = []
    current = None  # [line, text]
    for i, raw in enumerate(text.split("\n")):
        trimmed = raw.strip()
        if current is None and (trimmed == "" or trimmed.startswith("#")):
            continue
        if current is not None and trimmed.startswith("#"):
            continue
        continued = _CONTINUED.search(raw) is not None
        piece = _CONTINUED.sub("", raw)
        if current is None:
            current = [i + 1, piece]
        else:
            current[1] += " " + piece.strip()
        if not continued:
            m = _INSTRUCTION.fullmatch(current[1])
            if m:
                flags, args = _split_flags(m.group(2).strip())
                out.append(Step(current[0], m.group(1).upper(), args, flags))
            current = None
    return out


def _json_array(args):
    try:
        v = json.loads(args)
    except ValueError:
        return None
    return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None


def dockerignore_patterns(repo):
    file = os.path.join(repo, ".dockerignore")
    if not os.path.exists(file):
        return []
    with open(file, encoding="utf-8", errors="replace") as f:
        lines = [line.strip() for line in f.read().split("\n")]
    return [line for line in lines if line and not line.startswith("#") and not line.startswith("!")]


def ignored(rel, patterns):
    """A simple matcher for .dockerignore's common forms: "name", "dir/", "prefix*/", "**/name"."""
    parts = re.sub(r"/+$", "", rel).split("/")
    for p in patterns:
        p = re.sub(r"/+$", "", p)
        any_depth = p.startswith("**/")
        if any_depth:
            p = p[3:]
        regex = re.compile("[^/]*".join(re.escape(s) for s in p.split("*")))
        if any(regex.fullmatch(x) for x in parts) if any_depth else regex.fullmatch(parts[0]):
            return True
    return False


def _normalize(src):
    """Like Node's path.posix.normalize: "." for nothing, a trailing slash kept."""
    norm = posixpath.normpath(src) if src else "."
    if norm.startswith("//") and not norm.startswith("///"):
        norm = norm[1:]
    if src.endswith("/") and not norm.endswith("/"):
        norm += "/"
    return norm


# Programs that run lm-train found next to their own executable (common/trainer_path.h).
_STARTS_TRAINER = ("lm-server", "lm-worker")


def _copies_trainer_beside(steps, program):
    """The line of the RUN whose `cp` copies build/bin/PROGRAM, and whether that cp copies
    build/bin/lm-train too (None, False when no RUN copies the program)."""
    for s in steps:
        if s.instruction != "RUN":
            continue
        for command in re.split(r"&&|;|\|\|", s.args):
            words = command.split()
            if not words or words[0] != "cp" or f"build/bin/{program}" not in words:
                continue
            return s.line, "build/bin/lm-train" in words
    return None, False


def dockerfile_errors(file, repo):
    rel = os.path.relpath(file, repo)
    errors = []

    def fail(line, msg):
        errors.append(f"{rel}:{line}: {msg}")

    with open(file, encoding="utf-8", errors="replace") as f:
        steps = parse_dockerfile(f.read())
    patterns = dockerignore_patterns(repo)
    stages = []
    user = entrypoint = cmd = None
    for s in steps:
        if s.instruction == "FROM":
            m = re.search(r"\s+AS\s+(\S+)\s*\Z", s.args, re.IGNORECASE)
            stages.append(m.group(1) if m else str(len(stages)))
            user = entrypoint = cmd = None
        elif s.instruction in ("COPY", "ADD"):
            words = _json_array(s.args)
            if words is None:
                words = re.split(r"\s+", s.args)
            if len(words) < 2:
                fail(s.line, f"{s.instruction} needs a source and a destination")
            if "from" in s.flags:
                if s.flags["from"] not in stages:
                    fail(s.line, f"{s.instruction} --from={s.flags['from']} names no earlier stage")
                continue
            for src in words[:-1]:
                if re.match(r"https?://", src):
                    continue
                norm = _normalize(src)
                if norm.startswith("..") or posixpath.isabs(norm):
                    fail(s.line, f"{s.instruction} source {src} is outside the build context")
                elif not os.path.exists(os.path.join(repo, norm)):
                    fail(s.line, f"{s.instruction} source {src} does not exist in the repository "
                                 "(build context: the repository root)")
                elif norm != "." and ignored(norm, patterns):
                    fail(s.line, f"{s.instruction} source {src} is excluded by .dockerignore")
        elif s.instruction == "USER":
            user = s.args
        elif s.instruction in ("ENTRYPOINT", "CMD"):
            v = _json_array(s.args)
            if v is None:
                fail(s.line, f"{s.instruction} must be a JSON array (exec form, so signals reach the program)")
            if s.instruction == "ENTRYPOINT":
                entrypoint = v
            else:
                cmd = v
    if not stages:
        fail(1, "no FROM")
    if not user:
        fail(steps[-1].line if steps else 1, "the final stage sets no USER (images must not run as root)")
    elif re.match(r"(root|0)(:|\Z)", user):
        fail(1, f"the final stage runs as {user}")
    argv = (entrypoint or []) + (cmd or [])
    program = argv[0].split("/")[-1] if argv else None
    if program in _STARTS_TRAINER:
        line, beside = _copies_trainer_beside(steps, program)
        if not beside:
            fail(line or 1, f"lm-train must be copied next to {program} (one `cp build/bin/{program} "
                            f"build/bin/lm-train ... DIR`): {program} starts it from its own folder")
    flags = [a[2:].split("=")[0] for a in argv[1:] if a.startswith("--")]
    return errors, program, flags
