"""The command-line flags lm-server and lm-worker accept, so the manifests and Dockerfiles can be
checked against them.

  known_flags("lm-server", bin="build/bin/lm-server", repo=REPO) -> (flags: set, source: str)

From the program's --help (common/command_line.h prints "  --name ...") when the binary is
built; otherwise from its sources: every CommandLine::Add*("name", ...) in the folders that
define the program's flags.
"""
import os
import re
import subprocess

SOURCE_DIRS = {
    "lm-server": ["server"],
    "lm-worker": ["worker/agent"],
}

_HELP_FLAG = re.compile(r"\s+--([A-Za-z0-9][A-Za-z0-9_-]*)")
_DEFINITION = re.compile(r'\bAdd(?:String|Int|Double|Bool)\s*\(\s*"([A-Za-z0-9_-]+)"')


def flags_from_help(binary):
    """The flags `binary --help` lists. The programs print their usage on stderr and exit 0
    (common/command_line.h)."""
    try:
        run = subprocess.run([binary, "--help"], capture_output=True, text=True, errors="replace",
                             timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"{binary} --help: {e}") from e
    if run.returncode != 0:
        raise RuntimeError(f"{binary} --help exited {run.returncode}: {run.stderr}")
    flags = set()
    for line in f"{run.stdout}\n{run.stderr}".split("\n"):
        m = _HELP_FLAG.match(line)
        if m:
            flags.add(m.group(1))
    return flags


def _source_files(folder):
    if not os.path.isdir(folder):
        return
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            yield from _source_files(entry.path)
        elif re.search(r"\.(cc|h)\Z", entry.name):
            yield entry.path


def flags_from_sources(program, repo):
    flags = set()
    for folder in SOURCE_DIRS.get(program, []):
        for file in _source_files(os.path.join(repo, folder)):
            if file.endswith(("command_line.h", "command_line.cc")):
                continue
            with open(file, encoding="utf-8", errors="replace") as f:
                flags.update(_DEFINITION.findall(f.read()))
    return flags


def known_flags(program, binary, repo):
    if binary and os.path.exists(binary):
        flags = flags_from_help(binary)
        if not flags:
            raise RuntimeError(f"{binary} --help lists no flags")
        return flags, f"{binary} --help"
    dirs = ", ".join(SOURCE_DIRS[program])
    flags = flags_from_sources(program, repo)
    if not flags:
        raise RuntimeError(f"found no {program} flag definitions under {dirs}")
    return flags, f"{program}'s sources ({dirs}; binary not built)"
