#!/usr/bin/env python3
"""Checks that #include lines follow the source tree's dependency rules.

Usage: check_include_rules.py [--root DIR]   (DIR defaults to the repository holding this script)

Scans every C/C++ source under DIR (the files git knows, tracked or untracked-but-not-ignored,
when DIR is a git work tree; otherwise every file outside hidden and build folders) and prints
one line per forbidden include, `file:line: includes "x": rule`. Exit status: 0 when there is
none, 1 when there is one or more, 2 on a usage error. Standard library only; needs no build.

An include names a project file when its first folder is a top-level project folder
("server/job_manager.h"), when it is generated protobuf code ("lmtrain/v1/jobs.pb.h", counted as
proto/), or when a bare name ("proto_convert.h") exists beside the including file or in proto/.
Anything else (absl, gRPC, the C++ library) is external and only the LibTorch rule looks at it.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

# Folder rules. A source file matching `files` may include, from the project, only paths matching
# `only` (when given) and none matching `never`. Patterns are fnmatch globs ("*" crosses "/").
FOLDER_RULES = [
    # files           only                                  never
    ("common/*",      ["common/*"],                         []),
    ("storage/*",     ["common/*", "storage/*"],            []),
    ("text/*",        ["common/*", "text/*"],               []),
    ("artifacts/*",   ["common/*", "proto/*", "artifacts/*"], []),
    ("server/*",      None,                                 ["worker/*", "client/*", "text/*"]),
    ("worker/agent/*", None,                                ["server/*", "client/*",
                                                             "worker/trainer*", "worker/models/*"]),
    ("client/*",      None,                                 ["server/*", "worker/*"]),
]

# LibTorch headers appear only in the trainer's folders and in the tests and benchmarks of them.
TORCH_INCLUDE = re.compile(r"^(torch|ATen|c10|caffe2)/")
TORCH_ALLOWED = [
    "worker/trainer/*", "worker/models/*", "worker/optim/*",
    "tests/worker/trainer/*", "tests/worker/models/*", "tests/worker/optim/*", "tests/integration/*",
    "bench/*",
]

# Edges allowed on purpose, each with its reason: (file, included path glob, reason).
EXCEPTIONS = [
    ("server/main.cc", "worker/agent/*",
     "lm-server's composition root: it adds a LocalWorker for --local-worker N"),
    ("server/server_flags.cc", "worker/agent/artifact_cache.h",
     "lm-server's flags: --artifact-cache-max-bytes defaults to the embedded worker's own bound"),
    ("tests/text/tokenizers/sentencepiece_torch_test.cc", "torch/*",
     "checks sentencepiece ids against the torch wheel's reference"),
]

PROJECT_FOLDERS = {"artifacts", "bench", "client", "common", "examples", "fuzz", "proto", "server",
                   "storage", "tests", "text", "worker"}
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".inc")
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def describe(files, only, never):
    if only is not None:
        return f"{files} may include only {', '.join(only)}"
    return f"{files} may not include {', '.join(never)}"


def source_files(root):
    """Paths relative to root, with "/" separators, sorted."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True, text=True, check=True).stdout.splitlines()
        if subprocess.run(["git", "-C", root, "rev-parse", "--show-prefix"],
                          capture_output=True, text=True).stdout.strip():
            out = []  # root is inside another repository: scan the folder itself
    except (OSError, subprocess.CalledProcessError):
        out = []
    if not out:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            rel = os.path.relpath(folder, root)
            out += [n if rel == "." else f"{rel}/{n}" for n in names]
    return sorted(p for p in out if p.endswith(SOURCE_SUFFIXES)
                  and os.path.isfile(os.path.join(root, p)))


def resolve(root, includer, name):
    """The project path an include names, or None when it is external."""
    if name.split("/", 1)[0] in PROJECT_FOLDERS:
        return name
    if name.startswith("lmtrain/"):
        return "proto/" + name
    beside = os.path.normpath(os.path.join(os.path.dirname(includer), name)).replace(os.sep, "/")
    if not beside.startswith("..") and os.path.isfile(os.path.join(root, beside)):
        return beside
    if os.path.isfile(os.path.join(root, "proto", name)):
        return "proto/" + name
    return None


def excepted(path, target):
    return any(path == f and fnmatch.fnmatch(target, t) for f, t, _ in EXCEPTIONS)


def violations_of(root, path, bracket, name):
    if TORCH_INCLUDE.match(name):
        if not any(fnmatch.fnmatch(path, p) for p in TORCH_ALLOWED) and not excepted(path, name):
            yield "LibTorch headers only in " + ", ".join(TORCH_ALLOWED)
        return
    target = resolve(root, path, name) if bracket == '"' else None
    if target is None or excepted(path, target):
        return
    for files, only, never in FOLDER_RULES:
        if not fnmatch.fnmatch(path, files):
            continue
        outside = only is not None and not any(fnmatch.fnmatch(target, p) for p in only)
        if outside or any(fnmatch.fnmatch(target, p) for p in never):
            yield describe(files, only, never)


def check(root):
    """Lines `file:line: includes "x": rule`, one per forbidden include."""
    problems = []
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE_LINE.match(line)
                if not m:
                    continue
                for rule in violations_of(root, path, m.group(1), m.group(2)):
                    close = ">" if m.group(1) == "<" else '"'
                    problems.append(f"{path}:{number}: includes {m.group(1)}{m.group(2)}{close}: {rule}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    args = parser.parse_args()
    if not os.path.isdir(args.root):
        print(f"check_include_rules: {args.root} is not a folder", file=sys.stderr)
        return 2
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} forbidden include(s); see the rules at the top of {__file__}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
