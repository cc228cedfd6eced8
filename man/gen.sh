#!/bin/sh
# Assembles the man page: the hand-written frame (infinigram.1.in) around the OPTIONS
# and COMMANDS sections that the binary generates from its command table.
# usage: gen.sh BINARY TEMPLATE VERSION > infinigram.1
# The generated text reaches awk through the environment: an `awk -v` value has its
# backslash escapes interpreted (\fB would become a form feed), differently by each awk.
set -e
bin=$1 tmpl=$2 version=$3
IG_MAN_GEN=$("$bin" --help-dump=man)
IG_MAN_VERSION=$version
export IG_MAN_GEN IG_MAN_VERSION
awk '
  /^@GENERATED@$/ { print ENVIRON["IG_MAN_GEN"]; next }
  { gsub(/@VERSION@/, ENVIRON["IG_MAN_VERSION"]); print }' "$tmpl"
