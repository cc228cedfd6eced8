# Bad inputs around case-folded datasets: --casefold takes no value and is an option of
# add only, a dataset not built cannot be loaded, and a damaged fold file is refused by
# name (at load for a wrong size or bad exception records, by :dataset verify for any
# changed byte; a flipped bitmap bit is reported by the query that reads it).

=== --casefold takes no value
:dataset add cf {DATA}/casefold.txt --casefold=yes
--- stdout
--- stderr
error: line 1: option --casefold takes no value
  :dataset add cf {DATA}/casefold.txt --casefold=yes
                                      ^
Use ":help :dataset" for usage.
--- status 1

=== --casefold alone is no source
:dataset add cf --casefold
--- stdout
--- stderr
error: line 1: no sources; usage: :dataset add NAME SOURCE... [--text TEXT]
--- status 1

=== --casefold belongs to :dataset add
build --casefold
--- stdout
--- stderr
error: line 1: unknown option --casefold for build
  build --casefold
        ^
Use ":help build" for usage.
--- status 1

=== not built yet
:dataset add cf {DATA}/casefold.txt --casefold
load cf
--- stdout
added cf: 1 source (run: build cf)
--- stderr
error: line 2: dataset cf is not built (run: build cf)
--- status 1

=== built
build cf
--- stdout
built cf: 228 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== a fold file cut short
$ sh cp -a {HOME}/indexes {TMP}/saved
$ sh f=$(ls -d {HOME}/indexes/cf-*)/shard-0000/fold && truncate -s 8 $f
load cf
--- stdout
--- stderr
error: line 1: cannot load cf: {HOME}/indexes/cf-ID/shard-0000/fold: size 8 bytes, expected 368 (index truncated or corrupt)
--- status 1

=== an exception record out of order
$ sh rm -rf {HOME}/indexes && cp -a {TMP}/saved {HOME}/indexes
$ sh f=$(ls -d {HOME}/indexes/cf-*)/shard-0000/fold && python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[-24+7]=0x7f; open(p,'wb').write(b)" $f && touch -r $(dirname $f)/../manifest.json $f
load cf
--- stdout
--- stderr
error: line 1: cannot load cf: index corrupt ({HOME}/indexes/cf-ID/shard-0000/fold: exception 13 (folded byte 9151314442816848088) is out of order or invalid): run :dataset verify cf, then rebuild
--- status 1

=== the same: verify names the file
$ args --bail
:dataset verify cf
--- stdout
--- stderr
error: line 1: {HOME}/indexes/cf-ID/shard-0000/fold: checksum mismatch (index corrupt; rebuild the dataset)
--- status 1

=== a flipped bitmap bit: verify names the file, and the query that reads it fails
$ sh rm -rf {HOME}/indexes && cp -a {TMP}/saved {HOME}/indexes
$ sh f=$(ls -d {HOME}/indexes/cf-*)/shard-0000/fold && python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[0]^=0x04; open(p,'wb').write(b)" $f && touch -r $(dirname $f)/../manifest.json $f
:dataset verify cf
load cf
count "romeo"
count --positions 1 "rome"
--- stdout
loaded cf: 228 B, 1 doc, 1 shard
4
--- stderr
error: line 1: {HOME}/indexes/cf-ID/shard-0000/fold: checksum mismatch (index corrupt; rebuild the dataset)
error: line 4: index corrupt ({HOME}/indexes/cf-ID/shard-0000/fold: checksum mismatch): run :dataset verify cf, then rebuild
--- status 1
