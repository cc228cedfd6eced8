# Ingestion formats and options: lines, jsonl, directories, ranges, inline text, NFC.

=== lines: each non-empty line is a document, with its source line
:dataset add ln {DATA}/lines.txt --format lines
build ln
--- stdout
added ln: 1 source (run: build ln)
built ln: 34 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== lines positions name the source line
$ args -d ln
count --positions 5 "line"
count "line\nsecond"
--- stdout
3
  …/data/lines.txt#1:1:7 @6  first line
  …/data/lines.txt#3:1:8 @7  second line
  …/data/lines.txt#4:1:7 @6  third line
0
--- stderr
--- status 0

=== jsonl records and a custom field
:dataset add js {DATA}/records.jsonl --format jsonl
build js
:dataset add js2 {DATA}/records.jsonl --format jsonl --field body
build js2
:dataset add jsbad {DATA}/badfield.jsonl --format jsonl
build jsbad
:dataset add jsbad2 {DATA}/badjson.jsonl --format jsonl
build jsbad2
--- stdout
added js: 1 source (run: build js)
built js: 36 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
added js2: 1 source (run: build js2)
added jsbad: 1 source (run: build jsbad)
added jsbad2: 1 source (run: build jsbad2)
--- stderr
error: line 4: {DATA}/records.jsonl:1: field "body" missing or not a string
error: line 6: {DATA}/badfield.jsonl:2: field "text" missing or not a string
error: line 8: {DATA}/badjson.jsonl:2: invalid JSON at byte offset 17: string or '}' expected near 'not'
--- status 1

=== jsonl positions
$ args -d js --json
count --positions 5 "hello"
--- stdout
{"command":"count","dataset":"js","query":"hello","count":3,"positions":[{"doc":0,"name":"{DATA}/records.jsonl","offset":0,"line":1,"column":1,"source_line":1,"length":5,"snippet":"hello world","hl0":0,"hl1":5},{"doc":1,"name":"{DATA}/records.jsonl","offset":0,"line":1,"column":1,"source_line":2,"length":5,"snippet":"hello there","hl0":0,"hl1":5},{"doc":2,"name":"{DATA}/records.jsonl","offset":6,"line":1,"column":7,"source_line":4,"length":5,"snippet":"third hello","hl0":6,"hl1":11}],"elapsed_ms":0}
--- stderr
--- status 0

=== field without jsonl is refused
:dataset add bad {DATA}/lines.txt --field text
--- stdout
--- stderr
error: line 1: --field applies to --format jsonl or jsonl-ids only
  :dataset add bad {DATA}/lines.txt --field text
                                    ^
Use ":help :dataset" for usage.
--- status 1

=== a directory walk: sorted, hidden skipped, binary and invalid files skipped with warnings
:dataset add tree {DATA}/tree
build tree
:dataset info tree
--- stdout
added tree: 1 source (run: build tree)
built tree: 30 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s), 2 files skipped
name        tree
status      built
index       {HOME}/indexes/tree-ID
bytes       30 B (30 bytes)
documents   2
shards      1
skipped     2 files
format      text, NFC
created     (time)
built       (time)
sources     {DATA}/tree (dir)
--- stderr
warning: line 2: skipped {DATA}/tree/sub/y.txt: invalid UTF-8 at byte offset 4
warning: line 2: skipped {DATA}/tree/sub/z.bin: binary file (NUL byte at offset 3)
--- status 0

=== the walk's documents
$ args -d tree
count --positions 10 "beta"
count "secret"
count "hidden"
--- stdout
2
  …/tree/a.txt:1:7 @6  alpha beta↵gamma↵
  …/sub/b.txt:1:1 @0  beta delta↵
0
0
--- stderr
--- status 0

=== strict makes skipped files errors; lossy repairs invalid ones
:dataset add tree2 {DATA}/tree --strict
build tree2
:dataset add tree3 {DATA}/tree --lossy
build tree3
--- stdout
added tree2: 1 source (run: build tree2)
added tree3: 1 source (run: build tree3)
built tree3: 50 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s), 1 file skipped
--- stderr
error: line 2: {DATA}/tree/sub/y.txt: invalid UTF-8 at byte offset 4
warning: line 4: skipped {DATA}/tree/sub/z.bin: binary file (NUL byte at offset 3)
warning: line 4: 1 invalid UTF-8 byte replaced by U+FFFD
--- status 1

=== ranges: bytes and percentages of each file
:dataset add r1 {DATA}/animals.txt --range 0:24
build r1
:dataset add r2 {DATA}/animals.txt --range 50%:
build r2
:dataset add r3 {DATA}/utf8.txt --range 2:
build r3
:dataset add r4 {DATA}/animals.txt --range 10:500
build r4
--- stdout
added r1: 1 source (run: build r1)
built r1: 25 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added r2: 1 source (run: build r2)
built r2: 34 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added r3: 1 source (run: build r3)
added r4: 1 source (run: build r4)
--- stderr
error: line 6: {DATA}/utf8.txt: range start 2 falls inside a UTF-8 character
error: line 8: range 10:500 is outside {DATA}/animals.txt (65 bytes)
--- status 1

=== range contents
$ args -d r1
count "dog"
count "mat."
count ""
--- stdout
0
1
25
--- stderr
--- status 0

=== inline text and NFC normalisation
:dataset add nfc {DATA}/nfc.txt
build nfc
:dataset add raw {DATA}/nfc.txt --no-normalize
build raw
:dataset add inl --text "first doc" --text "second doc"
build inl
--- stdout
added nfc: 1 source (run: build nfc)
built nfc: 17 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added raw: 1 source (run: build raw)
built raw: 18 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added inl: 2 sources (run: build inl)
built inl: 21 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== NFC: composed and decomposed forms match after normalisation
$ args -d nfc
count "caf\xc3\xa9"
count "cafe\xcc\x81"
--- stdout
2
2
--- stderr
--- status 0

=== without normalisation bytes are kept
$ args -d raw
count "caf\xc3\xa9"
count "cafe\xcc\x81"
--- stdout
1
1
--- stderr
--- status 0

=== inline documents
$ args -d inl
count --positions 5 "doc"
--- stdout
2
  <inline>:1:7 @6  first doc
  <inline>:1:8 @7  second doc
--- stderr
--- status 0

=== multi-byte columns are characters
:dataset add u8 {DATA}/utf8.txt
build u8
load u8
count --positions 1 "100"
count --positions 1 --width 3 "w\xc3\xb6rld"
--- stdout
added u8: 1 source (run: build u8)
built u8: 23 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded u8: 23 B, 1 doc, 1 shard
1
  …/data/utf8.txt:1:15 @18  héllo wörld € 100↵
1
  …/data/utf8.txt:1:7 @7  …lo wörld …
--- stderr
--- status 0

=== shards: a small shard size splits at document boundaries
:dataset add many {DATA}/lines.txt --format lines
build many --shard-size 12
load many
count --positions 3 "line"
build many --pointer-width 5
count "line"
--- stdout
added many: 1 source (run: build many)
built many: 34 B, 3 docs, 3 shards in 0.00 s (0.0 MB/s)
loaded many: 34 B, 3 docs, 3 shards
3
  …/data/lines.txt#1:1:7 @6  first line
  …/data/lines.txt#3:1:8 @7  second line
  …/data/lines.txt#4:1:7 @6  third line
built many: 34 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
3
--- stderr
--- status 0

=== symbolic links in a walk are reported, and errors with --strict
$ sh mkdir -p {TMP}/lt && printf 'real text\n' > {TMP}/lt/a.txt && ln -s a.txt {TMP}/lt/link.txt && ln -s / {TMP}/lt/root
:dataset add lt {TMP}/lt
build lt
:dataset add lt2 {TMP}/lt --strict
build lt2
--- stdout
added lt: 1 source (run: build lt)
built lt: 11 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s), 2 files skipped
added lt2: 1 source (run: build lt2)
--- stderr
warning: line 2: skipped {TMP}/lt/link.txt: symbolic link (not followed)
warning: line 2: skipped {TMP}/lt/root: symbolic link (not followed)
error: line 4: {TMP}/lt/link.txt: symbolic link (not followed)
--- status 1

=== JSONL: bad escapes, lone surrogates and deep nesting are errors with line, offset and reason
$ sh printf '{"text":"ok"}\n{"text":"bad \\uZZZZ more text"}\n' > {TMP}/esc.jsonl
$ sh printf '{"text":"lone \\ud800 x"}\n' > {TMP}/sur.jsonl
$ sh python3 -c "print('{\"text\":\"a\",\"x\":' + '['*100 + ']'*100 + '}')" > {TMP}/deep.jsonl
:dataset add esc {TMP}/esc.jsonl --format jsonl
build esc
:dataset add sur {TMP}/sur.jsonl --format jsonl
build sur
:dataset add deep {TMP}/deep.jsonl --format jsonl
build deep
--- stdout
added esc: 1 source (run: build esc)
added sur: 1 source (run: build sur)
added deep: 1 source (run: build deep)
--- stderr
error: line 2: {TMP}/esc.jsonl:2: invalid JSON at byte offset 29: invalid escape near '"bad \uZ'
error: line 4: {TMP}/sur.jsonl:1: invalid JSON at byte offset 22: invalid Unicode '\uD800' near '"lone \ud800 x"'
error: line 6: {TMP}/deep.jsonl:1: invalid JSON at byte offset 79: nested more than 64 deep
--- status 1
