# Repeated passages: the duplicated bytes within and across documents, the top repeats
# with their sources, the filters, JSON, the deduplicated corpus written and read back,
# and the bad inputs. Document 3 ends with "a stitch in" and document 4 starts with
# " time saves nine": the repeat is never joined across the document end.

=== add, build, load
:dataset add d {DATA}/dups.jsonl --format jsonl
build d
--- stdout
added d: 1 source (run: build d)
built d: 303 B, 5 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== the repeats of 12 bytes or more
$ args -d d
dups --min-len 12
--- stdout
repeats of 12 bytes or more in d: 132 of 298 bytes duplicated (44.30%)
  an earlier copy in the same document: 58 bytes; in an earlier document: 132 bytes
  5 distinct maximal repeats (2 with two copies in one document, 5 in several documents); longest 43 bytes
    length    count   docs  text / sources
        42        3      2  "he quick brown fox jumps over the lazy dog"
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
        43        2      2  "The quick brown fox jumps over the lazy dog"
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
        43        2      2  "he quick brown fox jumps over the lazy dog."
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
        30        2      2  ". A stitch in time saves nine."
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 4 …/data/dups.jsonl#5 line 1
        16        3      2  " time saves nine"
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 4 …/data/dups.jsonl#5 line 1
                            doc 4 …/data/dups.jsonl#5 line 1
--- stderr
--- status 0

=== filters
$ args -d d
dups --min-len 12 --within-doc --top 2
dups --min-len 12 --across-docs --top 2 --positions 1
--- stdout
repeats of 12 bytes or more in d (within documents): 58 of 298 bytes duplicated (19.46%)
  an earlier copy in the same document: 58 bytes; in an earlier document: 132 bytes
  2 distinct maximal repeats (2 with two copies in one document, 5 in several documents); longest 42 bytes
    length    count   docs  text / sources
        42        3      2  "he quick brown fox jumps over the lazy dog"
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
                            doc 2 …/data/dups.jsonl#3 line 1
        16        3      2  " time saves nine"
                            doc 0 …/data/dups.jsonl#1 line 1
                            doc 4 …/data/dups.jsonl#5 line 1
                            doc 4 …/data/dups.jsonl#5 line 1
repeats of 12 bytes or more in d (across documents): 132 of 298 bytes duplicated (44.30%)
  an earlier copy in the same document: 58 bytes; in an earlier document: 132 bytes
  5 distinct maximal repeats (2 with two copies in one document, 5 in several documents); longest 43 bytes
    length    count   docs  text / sources
        42        3      2  "he quick brown fox jumps over the lazy dog"
                            doc 0 …/data/dups.jsonl#1 line 1
                            (2 more)
        43        2      2  "The quick brown fox jumps over the lazy dog"
                            doc 0 …/data/dups.jsonl#1 line 1
                            (1 more)
--- stderr
--- status 0

=== json
$ args --json -d d
dups --min-len 20 --top 1 --positions 2
--- stdout
{"command":"dups","dataset":"d","min_len":20,"filter":"all","bytes":298,"duplicated":116,"duplicated_share":0.389261744966443,"duplicated_within":42,"duplicated_across":116,"duplicated_any":116,"repeats":4,"repeats_within":1,"repeats_across":4,"repeats_all":4,"longest":43,"top":[{"length":42,"count":3,"documents":2,"within_doc":true,"across_docs":true,"text":"he quick brown fox jumps over the lazy dog","truncated":false,"sources":[{"doc":0,"name":"{DATA}/dups.jsonl","offset":1,"line":1,"column":2,"source_line":1},{"doc":2,"name":"{DATA}/dups.jsonl","offset":1,"line":1,"column":2,"source_line":3}]}],"elapsed_ms":0}
--- stderr
--- status 0

=== the corpus without later copies, indexed again: nothing of 12 bytes repeats
$ args -d d
dups --min-len 12 --top 0 --write {TMP}/dedup.jsonl
:dataset add dedup {TMP}/dedup.jsonl --format jsonl
build dedup
load dedup
dups --min-len 12
--- stdout
repeats of 12 bytes or more in d: 132 of 298 bytes duplicated (44.30%)
  an earlier copy in the same document: 58 bytes; in an earlier document: 132 bytes
  5 distinct maximal repeats (2 with two copies in one document, 5 in several documents); longest 43 bytes
wrote {TMP}/dedup.jsonl: 5 records, 166 bytes kept
added dedup: 1 source (run: build dedup)
built dedup: 171 B, 5 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded dedup: 171 B, 5 docs, 1 shard
repeats of 12 bytes or more in dedup: 0 of 166 bytes duplicated (0.00%)
  an earlier copy in the same document: 0 bytes; in an earlier document: 0 bytes
  0 distinct maximal repeats (0 with two copies in one document, 0 in several documents)
--- stderr
--- status 0

=== bad inputs
$ args -d d
dups --min-len 0
dups --within-doc --across-docs
dups 12
dups --min-len 12 --write {TMP}/no/such/dir/out.jsonl
--- stdout
--- stderr
error: line 1: --min-len: 0 is out of range (1 to 1000000000)
  dups --min-len 0
                 ^
Use ":help dups" for usage.
error: line 2: give at most one of --within-doc and --across-docs
  dups --within-doc --across-docs
       ^
Use ":help dups" for usage.
error: line 3: unexpected argument; usage: dups [--min-len K] [--top N] [--positions K] [--within-doc | --across-docs] [--memory SIZE] [--threads N] [--write FILE]
  dups 12
       ^
Use ":help dups" for usage.
error: line 4: {TMP}/no/such/dir/out.jsonl: cannot create: No such file or directory
--- status 1

=== no dataset loaded
dups
--- stdout
--- stderr
error: line 1: no dataset loaded (use: load NAME)
--- status 1

=== a case-folded dataset is written as its documents are, not folded
:dataset add fold {DATA}/dups-fold --casefold
build fold
load fold
dups --min-len 10 --top 0 --write {TMP}/fold.jsonl
:dataset add folded-out {TMP}/fold.jsonl --format jsonl --field text
build folded-out
load folded-out
doc 0
doc 1
--- stdout
added fold: 1 source (run: build fold)
built fold: 74 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded fold: 74 B, 2 docs, 1 shard
repeats of 10 bytes or more in fold: 38 of 72 bytes duplicated (52.78%)
  an earlier copy in the same document: 18 bytes; in an earlier document: 20 bytes
  2 distinct maximal repeats (1 with two copies in one document, 2 in several documents); longest 20 bytes
wrote {TMP}/fold.jsonl: 3 records, 34 bytes kept
added folded-out: 1 source (run: build folded-out)
built folded-out: 37 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded folded-out: 37 B, 3 docs, 1 shard
doc 0 · {TMP}/fold.jsonl#1 · 19 bytes
     1  Straße ist groß. 
doc 1 · {TMP}/fold.jsonl#2 · 1 bytes
     1  
--- stderr
--- status 0

=== a repeat that ends inside a character: the character, no copy, is kept whole
:dataset add u8 {DATA}/dups-utf8
build u8
load u8
dups --min-len 4 --top 0 --write {TMP}/u8.jsonl
:dataset add u8-out {TMP}/u8.jsonl --format jsonl --field text
build u8-out
load u8-out
doc 1
doc 2
--- stdout
added u8: 1 source (run: build u8)
built u8: 26 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded u8: 26 B, 3 docs, 1 shard
repeats of 4 bytes or more in u8: 10 of 23 bytes duplicated (43.48%)
  an earlier copy in the same document: 8 bytes; in an earlier document: 6 bytes
  2 distinct maximal repeats (1 with two copies in one document, 2 in several documents); longest 6 bytes
wrote {TMP}/u8.jsonl: 4 records, 14 bytes kept
added u8-out: 1 source (run: build u8-out)
built u8-out: 18 B, 4 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded u8-out: 18 B, 4 docs, 1 shard
doc 1 · {TMP}/u8.jsonl#2 · 1 bytes
     1  y
doc 2 · {TMP}/u8.jsonl#3 · 3 bytes
     1  è2
--- stderr
--- status 0
