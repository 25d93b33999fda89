#!/usr/bin/env bash
# Prints, one a line and sorted, the Debian packages that own the shared libraries the given
# executables and libraries load (their `ldd` closure), so a Dockerfile's runtime stage installs
# exactly those instead of a hand-kept list that drifts from the build.
#
#   deploy/docker/runtime-packages.sh build/bin/lm-worker build/lib/liblmtrain_spm.so
#
# Libraries no package owns (e.g. an unpacked LibTorch under /opt) are reported on stderr and
# left out: the Dockerfile copies those itself. A library ldd cannot find is an error, unless
# its name is in RUNTIME_PACKAGES_ALLOW_MISSING (space-separated, e.g. "libcuda.so.1", which
# the NVIDIA container runtime mounts from the host's driver).
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 BINARY_OR_LIBRARY..." >&2
  exit 2
fi

libs=$(for f in "$@"; do
  out=$(ldd "$f") || { echo "runtime-packages: ldd failed on $f" >&2; exit 1; }
  missing=$(awk '$2 == "=>" && $3 == "not" {print $1}' <<<"$out")
  for m in $missing; do
    if [[ " ${RUNTIME_PACKAGES_ALLOW_MISSING:-} " != *" $m "* ]]; then
      echo "runtime-packages: $f needs $m, which ldd cannot find" >&2
      exit 1
    fi
  done
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$out"
done | sort -u)

# dpkg knows a file under the path its package shipped it at, which with merged /usr may be
# /lib/... or /usr/lib/..., and behind an alternatives link (libblas.so.3) only at its target:
# ask once about every spelling of every library, then take the first one dpkg knows.
declare -A spellings=()
for lib in $libs; do
  real=$(readlink -f "$lib")
  spellings[$lib]="$lib $real ${lib#/usr} /usr$lib ${real#/usr} /usr$real"
done
declare -A owner_of=()
while IFS= read -r line; do
  owner_of[${line#*: }]=${line%%: *}
done < <(dpkg-query -S ${spellings[@]+${spellings[@]}} 2>/dev/null | grep ': /' || true)

for lib in $libs; do
  found=""
  for c in ${spellings[$lib]}; do
    if [ -n "${owner_of[$c]:-}" ]; then found=${owner_of[$c]%%,*}; break; fi
  done
  if [ -n "$found" ]; then
    echo "${found%%:*}"
  else
    echo "runtime-packages: no Debian package owns $lib (copy it yourself)" >&2
  fi
done | sort -u
