#!/bin/sh
# Puts the Datastar browser client that the pages load (/static/datastar.js) at $1, from the
# npm package @starfederation/datastar at the version the SDK speaks (datastar 0.4.1: Datastar
# 1.0.4). Never fails the build: the benchmark's connections do not run the client, only a
# browser needs it, and without it the peer answers 404 for the script (README.md).
set -u
out=${1:?usage: fetch-client.sh OUT.js}
version=${DATASTAR_CLIENT_VERSION:-1.0.4}
[ -s "$out" ] && exit 0
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --silent "@starfederation/datastar@$version" >/dev/null 2>&1); then
    echo "fetch-client: @starfederation/datastar@$version is not on the npm registry; the pages' /static/datastar.js will answer 404 (see bench/peers/datastar/README.md)" >&2
    exit 0
fi
tar xzf "$tmp"/*.tgz -C "$tmp"
js=$(find "$tmp/package" -name datastar.js -path '*bundles*' | head -n 1)
[ -n "$js" ] || js=$(find "$tmp/package" -name datastar.js | head -n 1)
if [ -z "$js" ]; then
    echo "fetch-client: no datastar.js in @starfederation/datastar@$version" >&2
    exit 0
fi
cp "$js" "$out"
echo "fetch-client: $out from @starfederation/datastar@$version ($(wc -c <"$out") bytes)"
