#!/usr/bin/env bash
# Installs the package a user installs (scripts/pack.mjs) as a user would, and runs it: `npm pack`,
# then `npm install -g` of the tarball into an empty prefix outside the repository, then
# `pair --version`, `pair --help` and `pair demo --tour-only` from that prefix, with no tsx, vite or
# esbuild installed there. Runs on the node first on PATH, e.g. on Node 22:
#
#   bash scripts/use-node.sh 22 bash scripts/check-package.sh
#
# Needs the build's outputs (`npm ci` or `npm run build`). The dependencies come from the registry.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fail() {
  echo "check-package: $*" >&2
  exit 1
}

tgz=$(node "$root/scripts/pack.mjs")
version=$(node -p 'require(process.argv[1]).version' "$root/package.json")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
echo "check-package: Node $(node --version), installing $(basename "$tgz") into $prefix"
# From an empty folder outside the checkout, so no workspace or node_modules of the repository helps.
(cd "$work" && npm install -g --prefix "$prefix" --no-audit --no-fund "$tgz")

installed="$prefix/lib/node_modules/pair-cluster"
for tool in tsx vite esbuild; do
  [[ ! -e $installed/node_modules/$tool ]] || fail "$tool is installed with the package"
done
[[ -x $prefix/bin/pair ]] || fail "no pair command in $prefix/bin"

# The user's home is a scratch one: the demo writes nothing where a real node keeps its files.
mkdir -p "$work/home"
run() { (cd "$work" && env -u PAIR_CONFIG HOME="$work/home" PATH="$prefix/bin:$PATH" "$@"); }

[[ $(run sh -c "command -v pair") == "$prefix/bin/pair" ]] || fail "pair on PATH is not the installed one"
out=$(run pair --version)
[[ $out == "pair $version" ]] || fail "pair --version printed '$out', not 'pair $version'"
help=$(run pair --help)
[[ $help == "Usage: pair "* && $help == *"  demo "* ]] || fail "pair --help does not list the commands"
run pair demo --tour-only || fail "pair demo --tour-only failed"
echo "check-package: pair $version from the package runs on Node $(node --version): --version, --help, demo --tour-only"
