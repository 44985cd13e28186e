#!/usr/bin/env bash
# Checks the headers an install put under PREFIX/include/binlog:
#
#   tools/check_headers.sh PREFIX
#
# 1. An installed header includes only installed headers of this library
#    (or abseil / system headers): otherwise it does not compile for a
#    consumer.
# 2. An installed header includes an internal (non-public) header only
#    where tools/install/headers_transitional.txt lists that exact pair; a
#    listed pair that no longer occurs is an error too (delete the line),
#    so the list only shrinks and internals cannot leak back in.
# 3. Every installed header is public (tools/install/headers.txt) or an
#    internal header of a listed pair.
# 4. An installed header defines nothing in a namespace `internal`: it may
#    only forward-declare internal classes (for a pimpl pointer or a
#    friend), so no internal type is usable through the API.
# 5. Every installed header compiles on its own, as C++17 and as C++20,
#    with only the installed include directory and abseil's flags.
#
# Prints one line per problem and a summary line; exits 1 on any problem.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: tools/check_headers.sh PREFIX" >&2
  exit 2
fi
prefix=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
inc="$prefix/include/binlog"

problems=0
problem() {
  echo "header-check: $*"
  problems=$((problems + 1))
}

strip_comments() { grep -v '^[[:space:]]*\(#\|$\)' "$1"; }

declare -A public=() allowed=() seen_pair=() installed=()
for h in $(strip_comments tools/install/headers.txt); do public[$h]=1; done
while read -r a b; do
  allowed["$a $b"]=1
done < <(strip_comments tools/install/headers_transitional.txt)

while IFS= read -r h; do
  installed[$h]=1
done < <(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)

if [[ ${#installed[@]} -eq 0 ]]; then
  problem "no headers under $inc"
fi

for h in "${!public[@]}"; do
  [[ -n "${installed[$h]:-}" ]] || problem "public header $h is not installed"
done

for h in $(printf '%s\n' "${!installed[@]}" | sort); do
  # Quoted includes name headers of this library or abseil.
  for dep in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$inc/$h"); do
    case "$dep" in absl/*) continue ;; esac
    if [[ -z "${installed[$dep]:-}" ]]; then
      problem "$h includes \"$dep\", which is not installed"
    elif [[ -z "${public[$dep]:-}" ]]; then
      if [[ -n "${allowed["$h $dep"]:-}" ]]; then
        seen_pair["$h $dep"]=1
        echo "header-check: tolerated (headers_transitional.txt): $h includes internal $dep"
      else
        problem "$h includes \"$dep\", an internal header (not in tools/install/headers.txt)"
      fi
    fi
  done
  if [[ -z "${public[$h]:-}" ]]; then
    target=0
    for pair in "${!allowed[@]}"; do
      [[ "${pair#* }" == "$h" ]] && target=1
    done
    [[ $target -eq 1 ]] || problem "$h is installed but neither public nor listed in headers_transitional.txt"
  fi
done

for pair in $(printf '%s\n' "${!allowed[@]}" | tr ' ' '|' | sort); do
  pair=${pair/|/ }
  if [[ -z "${seen_pair[$pair]:-}" ]]; then
    includer=${pair% *}
    if [[ -n "${installed[$includer]:-}" ]]; then
      problem "stale entry in tools/install/headers_transitional.txt: $includer no longer includes ${pair#* } (delete the line)"
    else
      problem "stale entry in tools/install/headers_transitional.txt: $includer is not installed (delete the line)"
    fi
  fi
done

for h in $(printf '%s\n' "${!installed[@]}" | sort); do
  # Inside `namespace internal { ... }`: only blank lines, comments and
  # forward declarations ("class X;", "struct X;").
  bad=$(awk '
    /^namespace internal \{/ { inside = 1; next }
    inside && /^}  \/\/ namespace internal/ { inside = 0; next }
    inside && !/^[[:space:]]*$/ && !/^[[:space:]]*\/\// &&
      !/^[[:space:]]*(class|struct) [A-Za-z_][A-Za-z0-9_]*;[[:space:]]*$/ {
      printf "%d: %s\n", NR, $0
    }' "$inc/$h")
  if [[ -n "$bad" ]]; then
    problem "$h defines something in namespace internal (only forward declarations may appear):"
    echo "$bad" | head -5 | sed 's/^/    /'
  fi
done

# Each header alone, in a translation unit of its own.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cflags=$(pkg-config --cflags binlog)
compiled=0
for std in c++17 c++20; do
  for h in $(printf '%s\n' "${!installed[@]}" | sort); do
    # Twice: the include guard must work too.
    if ! out=$(printf '#include "%s"\n#include "%s"\n' "$h" "$h" |
        g++ -std=$std -fsyntax-only -Wall -Wextra -Werror -x c++ - \
          $cflags 2>&1); then
      problem "$h does not compile on its own as $std:"
      echo "$out" | head -20 | sed 's/^/    /'
    fi
    compiled=$((compiled + 1))
  done
done

if [[ $problems -eq 0 ]]; then
  echo "header-check: ${#installed[@]} installed headers (${#public[@]} public), $compiled standalone compiles: OK"
else
  echo "header-check: $problems problem(s)"
  exit 1
fi
