# contam: eval items' n-gram overlap with the corpus, as text lines and JSONL, word and
# byte n-grams, JSON, and bad input.

=== set up
:dataset add facts {DATA}/contam-corpus.txt --format lines
build facts
:dataset add shakespeare {DATASETS}/tinyshakespeare.txt
build shakespeare
:dataset add later {DATA}/contam-corpus.txt
--- stdout
added facts: 1 source (run: build facts)
built facts: 331 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
added shakespeare: 1 source (run: build shakespeare)
built shakespeare: 1.1 MB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added later: 1 source (run: build later)
--- stderr
--- status 0

=== an eval set of text lines: 13 words, the paper's rule
$ args -d facts
contam {DATA}/contam-eval.txt
--- stdout
contam {DATA}/contam-eval.txt: 6 items, 13-grams of words
    item   line  n-grams  in corpus  overlap  longest match  first source
       1      1        8          7    87.5%      102 bytes  doc 0 …/data/contam-corpus.txt#1 line 1
       2      2       11          0     0.0%       59 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       3      3        6          0     0.0%        5 bytes  doc 2 …/data/contam-corpus.txt#3 line 1
       4      5        1          1   100.0%       21 bytes  doc 2 …/data/contam-corpus.txt#3 line 1
       5      6        1          1   100.0%       27 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       6      7        1          1   100.0%       68 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
4 of 6 items contaminated (≥ 80%), 0 partly (≥ 20%)
28 n-grams, 28 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11760.5
--- stderr
--- status 0

=== JSONL with --field, lowercased, a lower threshold, listing two items
$ args -d facts
contam {DATA}/contam-eval.jsonl --field question --lowercase --threshold 0.5 --list 2
--- stdout
contam {DATA}/contam-eval.jsonl: 3 items, 13-grams of words, lowercased
    item   line  n-grams  in corpus  overlap  longest match  first source
       1      1        5          4    80.0%      112 bytes  doc 2 …/data/contam-corpus.txt#3 line 1
       2      2        9          2    22.2%       74 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
  (1 more item, lower overlap: --list K shows more, JSON all)
1 of 3 items contaminated (≥ 50%), 1 partly (≥ 20%)
21 n-grams, 21 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11951.0
note: the index is not case-folded: lowercased n-grams match lowercase corpus text only
--- stderr
--- status 0

=== byte n-grams and short word n-grams on Tiny Shakespeare
$ args -d shakespeare
contam {DATA}/contam-eval.txt --bytes --n 20 --list 3
contam {DATA}/contam-eval.jsonl --field question --n 3 --list 1
--- stdout
contam {DATA}/contam-eval.txt: 6 items, 20-grams of bytes
    item   line  n-grams  in corpus  overlap  longest match  first source
       1      1       84          0     0.0%       12 bytes  doc 0 …/datasets/tinyshakespeare.txt line 11876
       2      2      107          0     0.0%       13 bytes  doc 0 …/datasets/tinyshakespeare.txt line 24885
       3      3       94          0     0.0%       12 bytes  doc 0 …/datasets/tinyshakespeare.txt line 36729
  (3 more items, lower overlap: --list K shows more, JSON all)
0 of 6 items contaminated (≥ 80%), 0 partly (≥ 20%)
363 n-grams, 355 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-10078.3
contam {DATA}/contam-eval.jsonl: 3 items, 3-grams of words
    item   line  n-grams  in corpus  overlap  longest match  first source
       3      3       17          1     5.9%       16 bytes  doc 0 …/datasets/tinyshakespeare.txt line 31914
  (2 more items, lower overlap: --list K shows more, JSON all)
0 of 3 items contaminated (≥ 80%), 0 partly (≥ 20%)
51 n-grams, 51 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11363.4
--- stderr
--- status 0

=== JSON
$ args -d facts --json
contam {DATA}/contam-eval.jsonl --field question --n 8
--- stdout
{"command":"contam","dataset":"facts","source":"{DATA}/contam-eval.jsonl","n":8,"unit":"words","lowercase":false,"threshold":0.8,"partial":0.2,"items":[{"item":1,"line":1,"words":17,"ngrams":10,"in_corpus":10,"overlap":1,"verdict":"contaminated","longest_match":{"bytes":113,"start":0,"count":1,"text":"Rivers carry sediment downstream and deposit it where the current slows, building deltas over thousands of years.","source":{"doc":2,"name":"{DATA}/contam-corpus.txt","offset":0,"line":1,"column":1,"source_line":3}}},{"item":2,"line":2,"words":21,"ngrams":14,"in_corpus":6,"overlap":0.42857142857142855,"verdict":"partly","longest_match":{"bytes":72,"start":32,"count":1,"text":"very suffix of a text in sorted order so that any substring can be found","source":{"doc":1,"name":"{DATA}/contam-corpus.txt","offset":22,"line":1,"column":23,"source_line":2}}},{"item":3,"line":3,"words":19,"ngrams":12,"in_corpus":0,"overlap":0,"verdict":"clean","longest_match":{"bytes":7,"start":7,"count":1,"text":" that a","source":{"doc":1,"name":"{DATA}/contam-corpus.txt","offset":62,"line":1,"column":63,"source_line":2}}}],"summary":{"items":3,"done":3,"contaminated":1,"partly":1,"ngrams":36,"distinct_ngrams":36,"searches":566},"bloom":{"bits":2199023255552,"hashes":1525,"elements":36,"false_positive_rate":0,"false_positive_rate_log10":-11594.052662439777},"cancelled":false,"elapsed_ms":0}
--- stderr
--- status 0

=== bad input
$ args -d facts
contam {DATA}/nothere.txt
contam {DATA}/empty.txt
contam {DATA}/contam-blank.txt
contam {DATA}/contam-eval.jsonl --field nope
contam {DATA}/contam-eval.txt --n 0
contam {DATA}/contam-eval.txt --threshold 1.5
contam {DATA}/contam-eval.txt --threshold 0.1 --partial 0.3
contam {DATA}/invalid.txt
contam
contam {DATA}/contam-eval.txt {DATA}/contam-eval.txt
--- stdout
--- stderr
error: line 1: {DATA}/nothere.txt: cannot read the eval set: No such file or directory
error: line 2: {DATA}/empty.txt: the eval set is empty (no non-empty line)
error: line 3: {DATA}/contam-blank.txt: the eval set is empty (no non-empty line)
error: line 4: {DATA}/contam-eval.jsonl:1: field "nope" missing or not a string
error: line 5: --n: 0 is out of range (1 to 1000000)
  contam {DATA}/contam-eval.txt --n 0
                                    ^
Use ":help contam" for usage.
error: line 6: --threshold: 1.5 is out of range (0 to 1)
  contam {DATA}/contam-eval.txt --threshold 1.5
                                            ^
Use ":help contam" for usage.
error: line 7: --partial (0.3) is above --threshold (0.1)
  contam {DATA}/contam-eval.txt --threshold 0.1 --partial 0.3
                                                ^
Use ":help contam" for usage.
error: line 8: {DATA}/invalid.txt:1: invalid UTF-8 at byte offset 10
error: line 9: usage: contam FILE [--field KEY] | --eval-dataset NAME [--n N] [--bytes] [--lowercase] [--threshold T] [--partial P] [--list K]
error: line 10: unexpected argument; usage: contam FILE [--field KEY] | --eval-dataset NAME [--n N] [--bytes] [--lowercase] [--threshold T] [--partial P] [--list K]
  contam {DATA}/contam-eval.txt {DATA}/contam-eval.txt
                                ^
Use ":help contam" for usage.
--- status 1

=== no dataset loaded, and a dataset not built
contam {DATA}/contam-eval.txt
load later
contam {DATA}/contam-eval.txt
--- stdout
--- stderr
error: line 1: no dataset loaded (use: load NAME)
error: line 2: dataset later is not built (run: build later)
error: line 3: no dataset loaded (use: load NAME)
--- status 1

=== decontamination at build: dropped, counted per source, recorded in the catalog
:dataset add clean {DATA}/contam-corpus.txt {DATA}/lines.txt --format lines --decontaminate {DATA}/contam-eval.jsonl --decontaminate-field question --n 8
build clean
:dataset info clean
load clean
contam {DATA}/contam-eval.jsonl --field question --n 8
--- stdout
added clean: 2 sources (run: build clean)
built clean: 251 B, 5 docs, 1 shard in 0.00 s (0.0 MB/s)
decontaminated against 3 eval items (36 distinct n-grams, hash c295c39758dea8cb): 1 of 6 documents dropped
  …/data/contam-corpus.txt                       1 of 3
  …/data/lines.txt                               0 of 3
name        clean
status      built
index       {HOME}/indexes/clean-ID
bytes       251 B (251 bytes)
documents   5
shards      1
skipped     0 files
format      lines, NFC
created     (time)
built       (time)
sources     {DATA}/contam-corpus.txt (lines)
            {DATA}/lines.txt (lines)
decontam    {DATA}/contam-eval.jsonl field question: 8-word n-grams, drop at ≥ 80%
            eval set hash c295c39758dea8cb (3 items, 36 distinct n-grams); 1 of 6 documents dropped
            dropped: …/data/contam-corpus.txt:3: 10 of 10 n-grams
loaded clean: 251 B, 5 docs, 1 shard
contam {DATA}/contam-eval.jsonl: 3 items, 8-grams of words
    item   line  n-grams  in corpus  overlap  longest match  first source
       1      1       10          0     0.0%        9 bytes  doc 0 …/data/contam-corpus.txt#1 line 1
       2      2       14          6    42.9%       72 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       3      3       12          0     0.0%        7 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
0 of 3 items contaminated (≥ 80%), 1 partly (≥ 20%)
36 n-grams, 36 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11594.1
--- stderr
--- status 0

=== decontamination with --flag-only and --lowercase: kept and listed; JSON
:dataset add flagged {DATA}/contam-corpus.txt --format lines --decontaminate {DATA}/contam-eval.txt --flag-only --threshold 0.5 --lowercase
build flagged
:dataset info flagged
:format json
build flagged --jobs 1
:dataset info flagged
--- stdout
added flagged: 1 source (run: build flagged)
built flagged: 331 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
decontaminated against 6 eval items (28 distinct n-grams, hash d0b729149b91f01d): 1 of 3 documents flagged (kept; listed in :dataset info)
name        flagged
status      built
index       {HOME}/indexes/flagged-ID
bytes       331 B (331 bytes)
documents   3
shards      1
skipped     0 files
format      lines, NFC
created     (time)
built       (time)
sources     {DATA}/contam-corpus.txt (lines)
decontam    {DATA}/contam-eval.txt: 13-word n-grams, flag at ≥ 50%, lowercased
            eval set hash d0b729149b91f01d (6 items, 28 distinct n-grams); 1 of 3 documents flagged
            doc 0 …/data/contam-corpus.txt:1: 8 of 8 n-grams
{"command":":format","key":"format","value":"json","elapsed_ms":0}
{"command":"build","dataset":"flagged","bytes":331,"documents":3,"shards":1,"skipped_files":0,"replaced":0,"decontam":{"eval_hash":"d0b729149b91f01d","eval_items":6,"eval_ngrams":28,"documents":3,"flagged":1,"sources":[{"name":"{DATA}/contam-corpus.txt","documents":3,"flagged":1}]},"jobs":1,"shard_size":1073741824,"memory_limited":false,"largest_shard":331,"mb_per_s":0,"elapsed_ms":0}
{"command":":dataset","name":"flagged","status":"built","index_path":"{HOME}/indexes/flagged-ID","bytes":331,"documents":3,"shards":1,"skipped_files":0,"format":"lines","normalize":true,"casefold":false,"decontaminate":{"eval_set":"{DATA}/contam-eval.txt","n":13,"threshold":0.5,"lowercase":true,"flag_only":true,"last_build":{"eval_hash":"d0b729149b91f01d","eval_items":6,"eval_ngrams":28,"documents":3,"caught":1,"flag_only":true,"sources":[{"name":"{DATA}/contam-corpus.txt","documents":3,"caught":1}],"docs":[{"doc":0,"name":"{DATA}/contam-corpus.txt","source_line":1,"ngrams":8,"matched":8}]}},"sources":[{"kind":"lines","path":"{DATA}/contam-corpus.txt","size":331}],"line_index_missing":0,"lcp_missing":0,"created_at":"(time)","built_at":"(time)","elapsed_ms":0}
--- stderr
--- status 0

=== decontamination: bad input
:dataset add d1 {DATA}/contam-corpus.txt --n 5
:dataset add d2 {DATA}/contam-corpus.txt --decontaminate {DATA}/nothere.txt
:dataset add d3 {DATA}/contam-corpus.txt --decontaminate {DATA}/contam-eval.txt --threshold 2
:dataset add d4 {DATA}/contam-corpus.txt --decontaminate {DATA}/contam-eval.txt --n 0
:dataset add d5 {DATA}/contam-corpus.txt --format lines --decontaminate {DATA}/contam-corpus.txt
build d5
:dataset add d6 {DATA}/contam-corpus.txt --decontaminate {DATA}/empty.txt
build d6
--- stdout
added d5: 1 source (run: build d5)
added d6: 1 source (run: build d6)
--- stderr
error: line 1: --n applies with --decontaminate FILE
  :dataset add d1 {DATA}/contam-corpus.txt --n 5
                                           ^
Use ":help :dataset" for usage.
error: line 2: {DATA}/nothere.txt: cannot read the eval set: No such file or directory
error: line 3: --threshold: expected a number from 0 to 1
  :dataset add d3 {DATA}/contam-corpus.txt --decontaminate {DATA}/contam-eval.txt --threshold 2
                                                                                              ^
Use ":help :dataset" for usage.
error: line 4: --n: 0 is out of range (1 to 1000000)
  :dataset add d4 {DATA}/contam-corpus.txt --decontaminate {DATA}/contam-eval.txt --n 0
                                                                                      ^
Use ":help :dataset" for usage.
error: line 6: no text to index: decontamination dropped every document (3)
error: line 8: {DATA}/empty.txt: the eval set is empty (no non-empty line)
--- status 1

=== the documents of a dataset as the eval set
$ args -d clean
:dataset add evset {DATA}/contam-eval.txt --format lines
build evset
contam --eval-dataset evset --n 8
contam --eval-dataset nope
contam --eval-dataset later
contam {DATA}/contam-eval.txt --eval-dataset evset
contam --eval-dataset evset --field question
--- stdout
added evset: 1 source (run: build evset)
built evset: 483 B, 6 docs, 1 shard in 0.00 s (0.0 MB/s)
contam dataset evset: 6 items, 8-grams of words
     doc   line  n-grams  in corpus  overlap  longest match  first source
       0      1       13         12    92.3%      102 bytes  doc 0 …/data/contam-corpus.txt#1 line 1
       1      2       16          4    25.0%       59 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       2      3       11          0     0.0%        5 bytes  doc 0 …/data/contam-corpus.txt#1 line 1
       3      5        1          0     0.0%        5 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       4      6        2          2   100.0%       27 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
       5      7        6          6   100.0%       68 bytes  doc 1 …/data/contam-corpus.txt#2 line 1
3 of 6 items contaminated (≥ 80%), 1 partly (≥ 20%)
49 n-grams, 47 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11417.5
--- stderr
error: line 4: unknown dataset "nope"
error: line 5: dataset later is not built (run: build later)
error: line 6: give FILE or --eval-dataset, not both
  contam {DATA}/contam-eval.txt --eval-dataset evset
         ^
Use ":help contam" for usage.
error: line 7: --field applies to a JSONL FILE, not to --eval-dataset
--- status 1

=== a changed eval set makes a decontaminated dataset stale (1/2): built against it
$ sh printf 'alpha beta gamma delta\n' > {TMP}/dc-eval.txt && printf 'alpha beta gamma delta\nepsilon zeta eta theta\n' > {TMP}/dc-corpus.txt
:dataset add dc {TMP}/dc-corpus.txt --format lines --decontaminate {TMP}/dc-eval.txt --n 2
build dc
:dataset check dc
--- stdout
added dc: 1 source (run: build dc)
built dc: 23 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
decontaminated against 1 eval items (3 distinct n-grams, hash 984d6f5b7de3bb31): 1 of 2 documents dropped
dc is up to date
--- stderr
--- status 0

=== a changed eval set makes a decontaminated dataset stale (2/3): changed
$ sh printf 'epsilon zeta eta theta\n' > {TMP}/dc-eval.txt
:dataset check dc
--- stdout
dc is stale: {TMP}/dc-eval.txt changed (the eval set its decontamination reads) (run: build dc)
--- stderr
--- status 0

=== a changed eval set makes a decontaminated dataset stale (3/3): gone
$ sh rm {TMP}/dc-eval.txt
:dataset check dc
--- stdout
dc is stale: the eval set of its decontamination: {TMP}/dc-eval.txt: cannot read the eval set: No such file or directory (run: build dc)
--- stderr
--- status 0
