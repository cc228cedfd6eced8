# Catalog management: list, info, rename, remove, verify, check, staleness.

=== register and build two datasets
$ sh cp {DATA}/animals.txt {TMP}/a.txt
$ sh mkdir -p {TMP}/tree && cp {DATA}/tree/a.txt {TMP}/tree/a.txt && mkdir -p {TMP}/tree/sub && cp {DATA}/tree/sub/b.txt {TMP}/tree/sub/b.txt
:dataset add one {TMP}/a.txt
:dataset add two {TMP}/tree --text "inline words"
:dataset list
build one
build two
:dataset list
:dataset info two
--- stdout
added one: 1 source (run: build one)
added two: 2 sources (run: build two)
  name           status         bytes documents shards  sources
  one            registered         -         0      0  …/tmp/a.txt
  two            registered         -         0      0  …/tmp/tree …
built one: 66 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
built two: 43 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
  name           status         bytes documents shards  sources
  one            built           66 B         1      1  …/tmp/a.txt
  two            built           43 B         3      1  …/tmp/tree …
name        two
status      built
index       {HOME}/indexes/two-ID
bytes       43 B (43 bytes)
documents   3
shards      1
skipped     0 files
format      text, NFC
created     (time)
built       (time)
sources     {TMP}/tree (dir)
            <inline, 12 bytes> (inline)
--- stderr
--- status 0

=== json list and info
$ args --json
:dataset list
:dataset info one
--- stdout
{"command":":dataset","datasets":[{"name":"one","status":"built","index_path":"{HOME}/indexes/one-ID","bytes":66,"documents":1,"shards":1,"skipped_files":0,"format":"text","normalize":true,"casefold":false,"sources":[{"kind":"file","path":"{TMP}/a.txt","size":65}]},{"name":"two","status":"built","index_path":"{HOME}/indexes/two-ID","bytes":43,"documents":3,"shards":1,"skipped_files":0,"format":"text","normalize":true,"casefold":false,"sources":[{"kind":"dir","path":"{TMP}/tree","size":28},{"kind":"inline","size":12}]}],"elapsed_ms":0}
{"command":":dataset","name":"one","status":"built","index_path":"{HOME}/indexes/one-ID","bytes":66,"documents":1,"shards":1,"skipped_files":0,"format":"text","normalize":true,"casefold":false,"sources":[{"kind":"file","path":"{TMP}/a.txt","size":65}],"line_index_missing":0,"lcp_missing":0,"created_at":"(time)","built_at":"(time)","elapsed_ms":0}
--- stderr
--- status 0

=== verify and check when nothing changed
:dataset verify one
:dataset check one
:dataset check two
load one
--- stdout
one: index verified, all checksums match
one is up to date
two is up to date
loaded one: 66 B, 1 doc, 1 shard
--- stderr
--- status 0

=== a changed file makes the dataset stale
$ sh printf 'the cat came back.\n' >> {TMP}/a.txt
load one
:dataset check one
:dataset list
build one
load one
count "came back"
:dataset check one
--- stdout
loaded one: 66 B, 1 doc, 1 shard
one is stale: {TMP}/a.txt changed (size 65 → 84) (run: build one)
  name           status         bytes documents shards  sources
* one            stale           66 B         1      1  …/tmp/a.txt
  two            built           43 B         3      1  …/tmp/tree …
built one: 85 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded one: 85 B, 1 doc, 1 shard
1
one is up to date
--- stderr
warning: line 1: dataset one is stale: {TMP}/a.txt changed (size 65 → 84) (run: build one)
--- status 0

=== a change deep inside a directory is found by load and by check
$ sh sleep 0.01; printf 'epsilon\n' >> {TMP}/tree/sub/b.txt
load two
:dataset check two
build two
:dataset check two
--- stdout
loaded two: 43 B, 3 docs, 1 shard
two is stale: {TMP}/tree changed (size 28 → 36) (run: build two)
built two: 51 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
two is up to date
--- stderr
warning: line 1: dataset two is stale: {TMP}/tree changed (size 28 → 36) (run: build two)
--- status 0

=== rename and remove
:dataset rename one uno
:dataset rename uno two
:dataset rename nothere x
load uno
count "cat"
:dataset remove uno
:dataset remove uno
:dataset list
--- stdout
renamed one to uno
loaded uno: 85 B, 1 doc, 1 shard
3
removed uno
  name           status         bytes documents shards  sources
  two            built           51 B         3      1  …/tmp/tree …
--- stderr
error: line 2: dataset "two" already exists
error: line 3: unknown dataset "nothere"
error: line 7: unknown dataset "uno"
--- status 1

=== an index file edited after the build is refused at load, naming it
$ sh f=$(ls -d {HOME}/indexes/two-*/shard-0000/text); cp -p $f {TMP}/text.kept; printf 'X' | dd of=$f bs=1 seek=0 conv=notrunc 2>/dev/null
load two
--- stdout
--- stderr
error: line 1: cannot load two: {HOME}/indexes/two-ID/shard-0000/text: modified after the index was built (its checksum no longer matches): rebuild the dataset
--- status 1

=== touched but unchanged, it loads (the checksum matches)
$ sh f=$(ls -d {HOME}/indexes/two-*/shard-0000/text); cp {TMP}/text.kept $f; touch $f
load two
count "a"
--- stdout
loaded two: 51 B, 3 docs, 1 shard
7
--- stderr
--- status 0

=== a corrupted index is caught by verify, a truncated one by load
$ sh f=$(ls -d {HOME}/indexes/two-*/shard-0000/text); printf 'X' | dd of=$f bs=1 seek=0 conv=notrunc 2>/dev/null; touch -r $(dirname $f)/../manifest.json $f
:dataset verify two
--- stdout
--- stderr
error: line 1: {HOME}/indexes/two-ID/shard-0000/text: checksum mismatch (index corrupt; rebuild the dataset)
--- status 1

=== truncated index file
$ sh f=$(ls -d {HOME}/indexes/two-*/shard-0000/sa); truncate -s 8 $f
load two
:dataset verify two
--- stdout
--- stderr
error: line 1: cannot load two: {HOME}/indexes/two-ID/shard-0000/sa: size 8 bytes, expected 204 (index truncated or corrupt)
error: line 2: {HOME}/indexes/two-ID/shard-0000/text: checksum mismatch (index corrupt; rebuild the dataset)
--- status 1

=== wrong format version
$ sh f=$(ls -d {HOME}/indexes/two-*/manifest.json); sed -i 's/"format_version":\s*1/"format_version": 99/' $f
load two
--- stdout
--- stderr
error: line 1: cannot load two: {HOME}/indexes/two-ID/manifest.json: index format version 99 is not supported (this program reads 1); rebuild the dataset
--- status 1

=== a manifest field edited by hand (one no file checksum covers) is refused
$ sh f=$(ls -d {HOME}/indexes/two-*/manifest.json); sed -i 's/"format_version":\s*99/"format_version": 1/; s/"normalization":\s*"NFC"/"normalization": "none"/' $f
load two
:dataset verify two
--- stdout
--- stderr
error: line 1: cannot load two: {HOME}/indexes/two-ID/manifest.json: edited after the index was built (its fields no longer match its manifest_checksum); rebuild the dataset
error: line 2: {HOME}/indexes/two-ID/manifest.json: edited after the index was built (its fields no longer match its manifest_checksum); rebuild the dataset
--- status 1

=== a rebuild repairs it
build two
load two
count "beta"
:dataset verify two
--- stdout
built two: 51 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded two: 51 B, 3 docs, 1 shard
2
two: index verified, all checksums match
--- stderr
--- status 0

=== a suffix-array pointer past the text is refused at load
$ sh f=$(ls -d {HOME}/indexes/two-*/shard-0000/sa); printf '\377\377\377\177' | dd of=$f bs=1 seek=8 conv=notrunc 2>/dev/null; touch -r $(dirname $f)/../manifest.json $f
load two
--- stdout
--- stderr
error: line 1: cannot load two: index corrupt ({HOME}/indexes/two-ID/shard-0000/sa: row 2 points to 2147483647, past the text's 51 bytes): run :dataset verify two, then rebuild
--- status 1

=== a memory budget below what a build needs, and documents past 2^64
build two --memory 1
build two
load two
doc 99999999999999999999
count "\xff"
--- stdout
built two: 51 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded two: 51 B, 3 docs, 1 shard
0
--- stderr
error: line 1: memory budget of 1 bytes is below the minimum of 1 MiB a build needs
error: line 4: no document 99999999999999999999 (ids are 0 to 2)
  doc 99999999999999999999
      ^
--- status 1

=== check of a dataset not built yet
$ sh echo "gamma alpha" > {TMP}/flip.txt
:dataset add flip {TMP}/flip.txt
:dataset check flip
build flip
--- stdout
added flip: 1 source (run: build flip)
built flip: 13 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
error: line 2: dataset flip is not built (run: build flip)
--- status 1

=== a file source that became a directory is stale, then built as a directory
$ sh rm {TMP}/flip.txt && mkdir {TMP}/flip.txt && echo "alpha x" > {TMP}/flip.txt/in.txt
:dataset check flip
build flip
:dataset check flip
:dataset info flip
--- stdout
flip is stale: {TMP}/flip.txt changed (now a directory) (run: build flip)
built flip: 9 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
flip is up to date
name        flip
status      built
index       {HOME}/indexes/flip-ID
bytes       9 B (9 bytes)
documents   1
shards      1
skipped     0 files
format      text, NFC
created     (time)
built       (time)
sources     {TMP}/flip.txt (dir)
--- stderr
--- status 0
