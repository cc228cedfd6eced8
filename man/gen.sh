#!/bin/sh
# Assembles the man page: the hand-written frame (infinigram.1.in) around the OPTIONS
# and COMMANDS sections that the binary generates from its command table.
# usage: gen.sh BINARY TEMPLATE VERSION > infinigram.1
set -e
bin=$1 tmpl=$2 version=$3
gen=$("$bin" --help-dump=man)
awk -v gen="$gen" -v version="$version" '
  /^@GENERATED@$/ { print gen; next }
  { gsub(/@VERSION@/, version); print }' "$tmpl"
