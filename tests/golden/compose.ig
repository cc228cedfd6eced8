# Composed datasets: two line datasets queried as one, and one of their documents taken
# away. Document numbers run on from member to member; positions, doc and search name the
# member; the copy taken away is the first one in corpus order (a's line 1), so b's copy
# remains. Then the bad compositions and the refusals that protect members.

=== members
:dataset add a {DATA}/compose-a.txt --format lines
:dataset add b {DATA}/compose-b.txt --format lines
:dataset add t {DATA}/compose-t.txt --format lines
:dataset add x {DATA}/compose-x.txt --format lines
:dataset add raw {DATA}/compose-a.txt --format lines --no-normalize
:dataset add cf {DATA}/compose-a.txt --format lines --casefold
build cf
build a
build b
build t
build x
build raw
--- stdout
added a: 1 source (run: build a)
added b: 1 source (run: build b)
added t: 1 source (run: build t)
added x: 1 source (run: build x)
added raw: 1 source (run: build raw)
added cf: 1 source (run: build cf)
built cf: 35 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
built a: 35 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
built b: 47 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
built t: 23 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
built x: 13 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
built raw: 35 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== compose
:dataset compose ab a b
:dataset compose clean ab --minus t
:dataset list
:dataset info clean
--- stdout
composed ab of 2 datasets: 82 B, 5 docs (load ab to query it)
composed clean of 1 dataset, less what the subtracted ones hold: 59 B, 4 docs (load clean to query it)
  name           status         bytes documents shards  sources
  a              built           35 B         2      1  …/data/compose-a.txt
  ab             built           82 B         5      2  composed: a …
  b              built           47 B         3      1  …/data/compose-b.txt
  cf             built           35 B         2      1  …/data/compose-a.txt
  clean          built           59 B         4      3  composed: ab … minus …
  raw            built           35 B         2      1  …/data/compose-a.txt
  t              built           23 B         1      1  …/data/compose-t.txt
  x              built           13 B         1      1  …/data/compose-x.txt
name        clean
status      built
members     ab
minus       t
bytes       59 B (59 bytes)
documents   4
shards      3
built       (time) (its latest member)
text        NFC, 4-byte pointers
--- stderr
--- status 0

=== queries over a composition
$ args -d ab
count --positions 5 "the cat"
count "sat"
doc 2
predict "the "
search "sat"
--- stdout
2
  a:…/data/compose-a.txt#1:1:1 @0  the cat sat on the mat
  b:…/data/compose-b.txt#2:1:1 @0  the cat sat on the mat
3
doc 2 · b:{DATA}/compose-b.txt#1 · 11 bytes
     1  a bird sang
context: "the "
model: ∞-gram   effective n: 5   suffix count: 6   sparse: no
  next          count     prob
  'c'               2    0.333  ████████████████████
  'd'               2    0.333  ████████████████████
  'm'               2    0.333  ████████████████████
3 documents match
  doc 0  a:…/data/compose-a.txt#1  1 hit, first at line 1
      the cat sat on the mat
  doc 3  b:…/data/compose-b.txt#2  1 hit, first at line 1
      the cat sat on the mat
  doc 4  b:…/data/compose-b.txt#3  1 hit, first at line 1
      the dog sat
--- stderr
--- status 0

=== queries with a document taken away
$ args -d clean
count --positions 5 "the cat"
count "sat"
count ""
doc 0
doc 1
predict "the "
generate --max 12 --seed 3 "the "
spans "the cat sat on the mat"
--- stdout
1
  b:…/data/compose-b.txt#2:1:1 @0  the cat sat on the mat
2
59
doc 0 · a:{DATA}/compose-a.txt#2 · 11 bytes
     1  the dog ran
doc 1 · b:{DATA}/compose-b.txt#1 · 11 bytes
     1  a bird sang
context: "the "
model: ∞-gram   effective n: 5   suffix count: 4   sparse: no
  next          count     prob
  'd'               2    0.500  ████████████████████
  'c'               1    0.250  ██████████
  'm'               1    0.250  ██████████
the mat
[3 chars in 0.0 ms · interpolation, 2 levels · seed 3 · stop: end · median effective n 6 · longest verbatim span 3 bytes (doc 2, b:…/data/compose-b.txt#2 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
1 span of at least 8 bytes
   start length    count  text / sources
       0     22        1  "the cat sat on the mat"
                           doc 2 b:…/data/compose-b.txt#2 line 1
novelty: 0.0% of the 22 bytes are not inside a corpus span of 8 bytes or more
--- stderr
--- status 0

=== JSON names the member
$ args -d clean --json
count --positions 2 "the"
doc 3
--- stdout
{"command":"count","dataset":"clean","query":"the","count":4,"positions":[{"member":"a","doc":0,"name":"{DATA}/compose-a.txt","offset":0,"line":1,"column":1,"source_line":2,"length":3,"snippet":"the dog ran","hl0":0,"hl1":3},{"member":"b","doc":2,"name":"{DATA}/compose-b.txt","offset":0,"line":1,"column":1,"source_line":2,"length":3,"snippet":"the cat sat on the mat","hl0":0,"hl1":3}],"elapsed_ms":0}
{"command":"doc","member":"b","doc":3,"name":"{DATA}/compose-b.txt","source_line":3,"bytes":11,"first_line":1,"offset":0,"text":"the dog sat","elapsed_ms":0}
--- stderr
--- status 0

=== bad compositions
:dataset compose ab a b
:dataset compose c1 a nope
:dataset compose c2
:dataset compose c3 a --minus x
:dataset compose c4 a raw
:dataset compose c5 c5 a
:dataset add u {DATA}/compose-a.txt --format lines
:dataset compose c6 a u
:dataset compose c7 a b --minus
:dataset add --minus t c8 {DATA}/compose-a.txt
:dataset compose c9 a cf
:dataset compose c10 a --minus ,
:dataset compose c11 a b --minus t,,x
--- stdout
added u: 1 source (run: build u)
--- stderr
error: line 1: dataset "ab" already exists
error: line 2: unknown dataset "nope"
error: line 3: missing argument; usage: :dataset compose NAME A B... [--minus T,...]
error: line 4: x: document 0 ({DATA}/compose-x.txt:1) is not a document of what it is taken from: no document there has the same bytes, or each one that has is taken away by an earlier copy
error: line 5: a and raw index different text: a is NFC-normalised and raw is not (rebuild one with the other's --normalize setting)
error: line 6: c5 cannot be made of itself
error: line 8: u is not built (run: build u), so c6 cannot be made of it
error: line 9: option --minus needs a value (T,...)
  :dataset compose c7 a b --minus
                          ^
Use ":help :dataset" for usage.
error: line 10: option --minus applies to :dataset compose only
  :dataset add --minus t c8 {DATA}/compose-a.txt
               ^
Use ":help :dataset" for usage.
error: line 11: a and cf index different text: cf is case-folded and a is not (rebuild one with the other's --casefold setting)
error: line 12: --minus: an empty dataset name in "," (give T or T1,T2)
  :dataset compose c10 a --minus ,
                         ^
Use ":help :dataset" for usage.
error: line 13: --minus: an empty dataset name in "t,,x" (give T or T1,T2)
  :dataset compose c11 a b --minus t,,x
                           ^
Use ":help :dataset" for usage.
--- status 1

=== members are protected
:dataset remove a
:dataset remove t
build ab
:dataset verify clean
:dataset check clean
--- stdout
clean: index verified, all checksums match
clean is up to date
--- stderr
error: line 1: a is used by the composition ab: remove ab first
error: line 2: t is used by the composition clean: remove clean first
error: line 3: ab is made of other datasets and has no index of its own: build its members (a, …) instead
--- status 1

=== removing the composition frees its members
:dataset remove clean
:dataset remove ab
:dataset remove t
--- stdout
removed clean
removed ab
removed t
--- stderr
--- status 0

=== case-folded members: the copy taken away is the one with the same original bytes
:dataset add hw {DATA}/compose-cf.txt --format lines --casefold
:dataset add hwt {DATA}/compose-cft.txt --format lines --casefold
:dataset add hwx {DATA}/compose-cfx.txt --format lines --casefold
build hw
build hwt
build hwx
:dataset compose hwc hw --minus hwt
load hwc
doc 0
doc 1
count "hello world"
:dataset compose hwc2 hw --minus hwx
--- stdout
added hw: 1 source (run: build hw)
added hwt: 1 source (run: build hwt)
added hwx: 1 source (run: build hwx)
built hw: 30 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
built hwt: 12 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
built hwx: 12 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
composed hwc of 1 dataset, less what the subtracted ones hold: 18 B, 2 docs (load hwc to query it)
loaded hwc: 18 B, 2 docs, 2 shards
doc 0 · hw:{DATA}/compose-cf.txt#1 · 11 bytes
     1  Hello World
doc 1 · hw:{DATA}/compose-cf.txt#3 · 5 bytes
     1  other
1
--- stderr
error: line 12: hwx: document 0 ({DATA}/compose-cfx.txt:1) is not a document of what it is taken from: no document there has the same bytes, or each one that has is taken away by an earlier copy
--- status 1

=== an empty composition answers every command
:dataset compose nothing x --minus x
load nothing
eval --text "the cat sat"
count ""
--- stdout
composed nothing of 1 dataset, less what the subtracted ones hold: 0 B, 0 docs (load nothing to query it)
loaded nothing: 0 B, 0 docs, 2 shards
eval --text (11 bytes) · ∞-gram · context ≤ 100 bytes
  scored positions  10
  perplexity        10000000000.00
  bits per byte     33.2193
  zero probability  10 positions (100.00%), each counted at the floor P = 1e-10
                    the floor, not the model, dominates these figures
                    (pure ∞-gram perplexity is infinite on this text)
  ∞-gram agreement  0.0% (sparse: 0.0% of 0, non-sparse: 0.0% of 10)
  effective n
      1         10 ████████████████████████████████████████
0
--- stderr
--- status 0

=== a member rebuilt so that it no longer fits: list shows the composition broken, info says why
:dataset compose fit a b
build b --pointer-width 5
:dataset list
:dataset info fit
build b
:dataset info fit
--- stdout
composed fit of 2 datasets: 82 B, 5 docs (load fit to query it)
built b: 47 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
  name           status         bytes documents shards  sources
  a              built           35 B         2      1  …/data/compose-a.txt
  b              built           47 B         3      1  …/data/compose-b.txt
  cf             built           35 B         2      1  …/data/compose-a.txt
  fit            broken          82 B         5      2  composed: a …
  hw             built           30 B         3      1  …/data/compose-cf.txt
  hwc            built           18 B         2      2  composed: hw … minus …
  hwt            built           12 B         1      1  …/data/compose-cft.txt
  hwx            built           12 B         1      1  …/data/compose-cfx.txt
  nothing        built            0 B         0      2  composed: x … minus …
  raw            built           35 B         2      1  …/data/compose-a.txt
  u              registered         -         0      0  …/data/compose-a.txt
  x              built           13 B         1      1  …/data/compose-x.txt
name        fit
status      broken
members     a b
bytes       82 B (82 bytes)
documents   5
shards      2
built       (time) (its latest member)
loads       no: a and b were built with different suffix-array pointer widths (4 and 5 bytes): rebuild the narrower one with build --pointer-width 5
built b: 47 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
name        fit
status      built
members     a b
bytes       82 B (82 bytes)
documents   5
shards      2
built       (time) (its latest member)
text        NFC, 4-byte pointers
--- stderr
warning: line 2: composition fit, made of b, no longer loads: a and b were built with different suffix-array pointer widths (4 and 5 bytes): rebuild the narrower one with build --pointer-width 5
--- status 0

=== a set taken away grows larger than its member after a rebuild (1/2): composed
$ sh mkdir -p {TMP}/ma {TMP}/mt && printf 'doc one\n' > {TMP}/ma/1.txt && printf 'doc two\n' > {TMP}/ma/2.txt && printf 'doc one\n' > {TMP}/mt/1.txt
:dataset add ma {TMP}/ma
build ma
:dataset add mt {TMP}/mt
build mt
:dataset compose mc ma --minus mt
--- stdout
added ma: 1 source (run: build ma)
built ma: 18 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
added mt: 1 source (run: build mt)
built mt: 9 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
composed mc of 1 dataset, less what the subtracted ones hold: 9 B, 1 doc (load mc to query it)
--- stderr
--- status 0

=== a set taken away grows larger than its member after a rebuild (2/2): broken, its size never below zero
$ sh rm {TMP}/ma/2.txt && printf 'x' > {TMP}/ma/1.txt
build ma
:dataset info mc
--- stdout
built ma: 2 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
name        mc
status      broken
members     ma
minus       mt
bytes       0 B (0 bytes)
documents   0
shards      2
built       (time) (its latest member)
loads       no: mt: document 0 ({TMP}/mt/1.txt) is not a document of what it is taken from: no document there has the same bytes, or each one that has is taken away by an earlier copy
--- stderr
warning: line 1: composition mc, made of ma, no longer loads: mt: document 0 ({TMP}/mt/1.txt) is not a document of what it is taken from: no document there has the same bytes, or each one that has is taken away by an earlier copy
--- status 0
