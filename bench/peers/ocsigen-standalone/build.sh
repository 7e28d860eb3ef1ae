#!/bin/sh
# Builds the standalone Ocsigen peer into the folder $1: ../ocsigen/peer_services.ml and
# standalone.ml, linked with Eliom, staticmod and the SQLite store into one native executable.
set -eu
out=$1
src=$(cd "$(dirname "$0")" && pwd)
pkgs=eliom.server,ocsigenserver.ext.staticmod,ocsipersist.sqlite
mkdir -p "$out"
cp "$src/../ocsigen/peer_services.ml" "$src/standalone.ml" "$out/"
cd "$out"
ocamlfind ocamlopt -thread -package "$pkgs" -c peer_services.ml standalone.ml
# ocamlfind lists the SQLite store (which implements Eliom's Ocsipersist) after Eliom's
# server.cmxa, and the link fails with "No implementations provided for the following
# modules: Ocsipersist": the same command with those two archives moved before Eliom.
cmd=$(ocamlfind ocamlopt -thread -package "$pkgs" -linkpkg -o peer-ocsigen-standalone \
    peer_services.cmx standalone.cmx -only-show 2>/dev/null)
store=""
for word in $cmd; do
    case $word in */sqlite3.cmxa | */ocsipersist_sqlite.cmxa) store="$store $word" ;; esac
done
[ -n "$store" ] || { echo "ocamlfind named no SQLite store archives" >&2; exit 1; }
set --
for word in $cmd; do
    case $word in
    */sqlite3.cmxa | */ocsipersist_sqlite.cmxa) ;;
    */eliom/server/server.cmxa) set -- "$@" $store "$word" ;;
    *) set -- "$@" "$word" ;;
    esac
done
echo "$@"
"$@"
