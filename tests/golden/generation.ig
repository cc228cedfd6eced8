# generate, explain, spans, search, doc — and their bad input.

=== set up
:dataset add shakespeare {DATASETS}/tinyshakespeare.txt
build shakespeare
:dataset add docs {DATA}/lines.txt {DATA}/animals.txt --format lines
build docs
--- stdout
added shakespeare: 1 source (run: build shakespeare)
built shakespeare: 1.1 MB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added docs: 2 sources (run: build docs)
built docs: 99 B, 6 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== generate with a seed, then explain a step and the spans of the output
$ args -d shakespeare
generate --max 120 --temperature 0.8 --seed 7 "ROMEO:\n"
explain --step 3 --positions 1 --top 2
explain --last --top 1 --positions 1
spans --last --min-len 20 --positions 1
--- stdout
ROMEO:
Sirrah Biondello, gentle Catesby, what wouldst thou drain the traveller'd judgment afterward.

ANGELO:
I show in the lik
[120 chars in 0.0 ms · interpolation, 2 levels · seed 7 · stop: max · median effective n 15 · longest verbatim span 36 bytes (doc 0, …/datasets/tinyshakespeare.txt line 34116) · 56% of output inside corpus spans ≥ 20 bytes]
context: "ROMEO:\nSi"
model: interpolation, 2 levels   effective n: 10   suffix count: 1   sparse: no
step 3 chose 'r' with probability 0.6078
n-gram profile (suffix length ℓ: occurrences, and how many continue with 'r')
        ℓ      count   → next
          1      45537       2700  ████████████████████████
          2        281        137  ████████████▋
          3        182        105  ███████████▋
          4        105         81  ██████████▍
          5         41         31  ████████▍
        6-9          1          0  █▌
candidates:
  'r'      count 0        prob 0.6078   from: ℓ=5 0.6078
      (after the last 5 bytes of the context)
      …/tinyshakespeare.txt:25433:7 @726868  …me were cordial.↵↵CAMILLO:↵Sir, my lord,↵I could do th…
      (30 more)
  'n'      count 1        prob 0.2157   from: ℓ=9 0.1961 ℓ=5 0.0196
      …/tinyshakespeare.txt:16704:1 @472615  …n that they have took.↵↵ROMEO:↵Sin from thy lips? O trespa…
context: …"e traveller'd judgment afterward.\n\nANGELO:\nI show in the lik"
model: interpolation, 2 levels   effective n: 12   suffix count: 1   sparse: yes
n-gram profile (suffix length ℓ: occurrences, and how many continue with 'e')
        ℓ      count   → next
          1       7088       2333  ████████████████████████
          2        538        530  █████████████████
          3        438        431  ████████████████▌
          4        365        358  ████████████████
          5         52         52  ██████████▊
          6         21         21  ████████▍
          7         19         19  ████████▏
          8         18         18  ████████
          9          2          2  ███
      10-11          1          1  █▉
candidates:
  'e'      count 1        prob 1.0000   from: ℓ=11 0.8333 ℓ=9 0.1667
      …/tinyshakespeare.txt:16821:12 @475199  …sion! lover!↵Appear thou in the likeness of a sigh:↵Speak bu…
3 spans of at least 20 bytes
   start length    count  text / sources
      31     22        1  "y, what wouldst thou d"
                           doc 0 …/datasets/tinyshakespeare.txt line 10950
      40     22        1  "ouldst thou drain the "
                           doc 0 …/datasets/tinyshakespeare.txt line 21238
      69     36        1  "er'd judgment afterward.\n\nANGELO:\nI "
                           doc 0 …/datasets/tinyshakespeare.txt line 34116
novelty: 44.2% of the 120 bytes are not inside a corpus span of 20 bytes or more
--- stderr
--- status 0

=== greedy, top-k 1, stop strings, the end of a document, other models
$ args -d docs
generate --temperature 0 --seed 1 "the "
generate --top-k 1 --seed 99 "the "
generate --seed 3 --stop "log" --max 50 "the dog "
generate --seed 3 --no-stop-at-end --max 30 --infgram "A cat"
generate --seed 5 --n 2 --max 20 "the"
--- stdout
the log.
[4 chars in 0.0 ms · interpolation, 2 levels · seed 1 · stop: end · median effective n 7 · longest verbatim span 4 bytes (doc 4, …/data/animals.txt#2 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
the log.
[4 chars in 0.0 ms · interpolation, 2 levels · seed 99 · stop: end · median effective n 7 · longest verbatim span 4 bytes (doc 4, …/data/animals.txt#2 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
the dog sat on the 
[11 chars in 0.0 ms · interpolation, 2 levels · seed 3 · stop: stop · median effective n 14 · longest verbatim span 11 bytes (doc 3, …/data/animals.txt#1 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
A cat and a dog.
[11 chars in 0.0 ms · ∞-gram · seed 3 · stop: no_continuation · median effective n 11 · longest verbatim span 11 bytes (doc 5, …/data/animals.txt#3 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
the mat.
[5 chars in 0.0 ms · 2-gram · seed 5 · stop: end · median effective n 2 · longest verbatim span 5 bytes (doc 3, …/data/animals.txt#1 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
--- stderr
--- status 0

=== generate in JSON
$ args -d shakespeare --json
generate --max 40 --seed 11 --interp 3 "KING RICHARD"
generate --max 0 --seed 1 "x"
--- stdout
{"command":"generate","dataset":"shakespeare","text":" II:\nI will seem from brother, to offer ","chars":40,"seed":11,"stop_reason":"max","median_effective_n":12,"longest_span":16,"longest_span_source":{"doc":0,"name":"{DATASETS}/tinyshakespeare.txt","offset":728295,"line":25484,"column":8},"inside_spans_20":0,"elapsed_ms":0}
{"command":"generate","dataset":"shakespeare","text":"","chars":0,"seed":1,"stop_reason":"max","median_effective_n":0,"longest_span":0,"inside_spans_20":0,"elapsed_ms":0}
--- stderr
--- status 0

=== explain a text
$ args -d shakespeare
explain --top 2 --positions 2 --width 12 "O Romeo, Romeo! wherefore art"
--- stdout
context: "O Romeo, Romeo! wherefore art"
model: ∞-gram   effective n: 30   suffix count: 1   sparse: yes
n-gram profile (suffix length ℓ: occurrences, and how many continue with ' ')
        ℓ      count   → next
          1      67009      16508  ████████████████████████
          2       2278        539  ████████████████▊
          3        961        337  ██████████████▉
          4        213        161  ███████████▋
          5         14          9  █████▉
          6          8          8  ████▊
       7-29          1          1  █▌
candidates:
  ' '      count 1        prob 1.0000
      …/tinyshakespeare.txt:16909:1 @478139  …r.↵↵JULIET:↵O Romeo, Romeo! wherefore art thou Romeo?↵…
--- stderr
--- status 0

=== explain in JSON
$ args -d docs --json
explain --top 2 --positions 1 "the c"
--- stdout
{"command":"explain","dataset":"docs","model":"∞-gram","effective_n":6,"suffix_count":1,"sparse":true,"profile":[{"length":1,"count":3,"continue_count":2},{"length":2,"count":2,"continue_count":2},{"length":3,"count":1,"continue_count":1},{"length":4,"count":1,"continue_count":1},{"length":5,"count":1,"continue_count":1}],"candidates":[{"symbol":"a","bytes_hex":"61","count":1,"prob":1,"positions":[{"doc":3,"name":"{DATA}/animals.txt","offset":0,"line":1,"column":1,"source_line":1,"snippet":"the cat sat on the mat.","hl0":0,"hl1":5,"hl2":6}]}],"elapsed_ms":0}
--- stderr
--- status 0

=== spans of pasted text, filters
$ args -d shakespeare
spans --min-len 12 "O Romeo, Romeo! wherefore art thou Romeo? said the computer"
spans --min-len 6 --max-count 3 --words --positions 1 "wherefore art thou Romeo"
--- stdout
1 span of at least 12 bytes
   start length    count  text / sources
       0     41        1  "O Romeo, Romeo! wherefore art thou Romeo?"
                           doc 0 …/datasets/tinyshakespeare.txt line 16909
novelty: 30.5% of the 59 bytes are not inside a corpus span of 12 bytes or more
1 span of at least 6 bytes (rare: at most 3 occurrences)
   start length    count  text / sources
       0     24        1  "wherefore art thou Romeo"
                           doc 0 …/datasets/tinyshakespeare.txt line 16909
novelty: 0.0% of the 24 bytes are not inside a corpus span of 6 bytes or more
--- stderr
--- status 0

=== spans in JSON
$ args -d docs --json
spans --min-len 4 --positions 1 "the cat sat on the log"
--- stdout
{"command":"spans","dataset":"docs","spans":[{"start":0,"length":19,"count":1,"text":"the cat sat on the ","sources":[{"doc":3,"name":"{DATA}/animals.txt","offset":0,"line":1,"column":1,"source_line":1,"length":19}]},{"start":7,"length":15,"count":1,"text":" sat on the log","sources":[{"doc":4,"name":"{DATA}/animals.txt","offset":7,"line":1,"column":8,"source_line":2,"length":15}]}],"novelty":{"n":4,"uncovered_fraction":0},"searches":29,"elapsed_ms":0}
--- stderr
--- status 0

=== search
$ args -d docs
search "cat"
search "the" AND ("dog" OR "line")
search "sat" AND "log" --within 5
search "sat" AND "mat" --within 12
search "line" --limit 1 --offset 1
--- stdout
2 documents match
  doc 3  …/data/animals.txt#1  1 hit, first at line 1
      the cat sat on the mat.
  doc 5  …/data/animals.txt#3  1 hit, first at line 1
      A cat and a dog.
1 document matches
  doc 4  …/data/animals.txt#2  3 hits, first at line 1
      the dog sat on the log.
0 documents match with all clauses within 5 bytes
1 document matches with all clauses within 12 bytes
  doc 3  …/data/animals.txt#1  2 hits, first at line 1
      the cat sat on the mat.
3 documents match
  doc 1  …/data/lines.txt#3  1 hit, first at line 1
      second line
  (more: --offset 2)
--- stderr
--- status 0

=== a search over budget samples, and its hits are estimates
$ args -d docs
search "the" --budget 2
--- stdout
2 documents match (approximate: frequent clauses were sampled 1 in 2.000; hits are estimates)
  doc 3  …/data/animals.txt#1  ~2 hits (1 sampled), first at line 1
      the cat sat on the mat.
  doc 4  …/data/animals.txt#2  ~2 hits (1 sampled), first at line 1
      the dog sat on the log.
--- stderr
--- status 0

=== search in JSON
$ args -d docs --json
search "the" AND ("dog" OR "cat")
--- stdout
{"command":"search","dataset":"docs","documents_total":2,"approximate":false,"scale":1,"documents":[{"doc":3,"name":"{DATA}/animals.txt","hits":3,"first_line":1,"source_line":1,"snippet":"the cat sat on the mat.","hl0":0,"hl1":3},{"doc":4,"name":"{DATA}/animals.txt","hits":3,"first_line":1,"source_line":2,"snippet":"the dog sat on the log.","hl0":0,"hl1":3}],"elapsed_ms":0}
--- stderr
--- status 0

=== search: quoted terms with spaces inside parentheses, written with or without spaces
$ args -d docs
search ("sat on " OR "zzz") AND "the"
search ("the  cat" OR "a dog")
search ("cat"OR"dog")AND"sat"
--- stdout
2 documents match
  doc 3  …/data/animals.txt#1  3 hits, first at line 1
      the cat sat on the mat.
  doc 4  …/data/animals.txt#2  3 hits, first at line 1
      the dog sat on the log.
1 document matches
  doc 5  …/data/animals.txt#3  1 hit, first at line 1
      A cat and a dog.
2 documents match
  doc 3  …/data/animals.txt#1  2 hits, first at line 1
      the cat sat on the mat.
  doc 4  …/data/animals.txt#2  2 hits, first at line 1
      the dog sat on the log.
--- stderr
--- status 0

=== doc by id and name, lines and ranges
$ args -d docs
doc 0
doc 4 --range 4:11
doc 3 --lines 1:2
--- stdout
doc 0 · {DATA}/lines.txt#1 · 10 bytes
     1  first line
doc 4 · {DATA}/animals.txt#2 · 23 bytes
     1  dog sat
doc 3 · {DATA}/animals.txt#1 · 23 bytes
     1  the cat sat on the mat.
--- stderr
--- status 0

=== doc ranges never cut a character (a boundary inside one moves to its edge)
:dataset add zoe --text "Zoë and Zoë"
build zoe
load zoe
doc 0 --range 0:3
doc 0 --range 3:6
doc 0 --range=0:4
:format json
doc 0 --range 3:13
:format table
--- stdout
added zoe: 1 source (run: build zoe)
built zoe: 14 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded zoe: 14 B, 1 doc, 1 shard
doc 0 · <inline> · 13 bytes
     1  Zo
doc 0 · <inline> · 13 bytes
     1   a
doc 0 · <inline> · 13 bytes
     1  Zoë
{"command":":format","key":"format","value":"json","elapsed_ms":0}
{"command":"doc","doc":0,"name":"<inline>","bytes":13,"first_line":1,"offset":4,"text":" and Zoë","elapsed_ms":0}
format = table
--- stderr
--- status 0

=== search options as --name=VALUE, and the caps on a query
$ args -d shakespeare
search --within=50 --limit 1 "Romeo" AND "Juliet"
search --within 50 --limit 1 "Romeo" AND "Juliet"
search w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w
--- stdout
1 document matches with all clauses within 50 bytes
  doc 0  …/tinyshakespeare.txt  178 hits, first at line 15814
      ….↵↵LADY MONTAGUE:↵O, where is Romeo? saw you him to-day?↵Right gl…
1 document matches with all clauses within 50 bytes
  doc 0  …/tinyshakespeare.txt  178 hits, first at line 15814
      ….↵↵LADY MONTAGUE:↵O, where is Romeo? saw you him to-day?↵Right gl…
--- stderr
error: line 3: more than 256 clauses (the cap of a query)
  search w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                         ^
Use ":help search" for usage.
--- status 1

=== doc of the bundled text
$ args -d shakespeare
doc tinyshakespeare.txt --lines 1:4
--- stdout
doc 0 · {DATASETS}/tinyshakespeare.txt · 1115394 bytes
     1  First Citizen:
     2  Before we proceed any further, hear me speak.
     3  
--- stderr
--- status 0

=== bad input
$ args -d docs
search "the" AND ("dog" OR "cat"
search ("dog" OR "cat")) AND "the"
search ""
search "the" AND
search
explain --last
explain --step 1
spans --last
doc 99
doc nothing.txt
doc lines.txt
doc 0 --lines 0:2
generate --temperature -1 "x"
generate --top-p 0 "x"
generate --seed banana "x"
generate --stop "" "x"
search "the" and "dog"
search NOT "dog"
doc 0 --lines 5:2
doc 0 --range 9:3
generate --max 5 --seed 1 ""
generate --max 5 --seed 1 --max-context 0 "the\n"
--- stdout
the
--- stderr
error: line 1: unbalanced parenthesis
  search "the" AND ("dog" OR "cat"
                   ^
Use ":help search" for usage.
error: line 2: unbalanced parenthesis
  search ("dog" OR "cat")) AND "the"
                         ^
Use ":help search" for usage.
error: line 3: empty term
  search ""
         ^
Use ":help search" for usage.
error: line 4: the query ends with an operator
error: line 5: empty query; usage: search QUERY [--within W] [--limit N] [--offset N] [--budget N] [--width W]
error: line 6: no previous generation (run generate first)
error: line 7: no previous generation (run generate first)
error: line 8: no previous generation (run generate first)
error: line 9: no document 99 (ids are 0 to 5)
  doc 99
      ^
error: line 10: no document named "nothing.txt"
  doc nothing.txt
      ^
error: line 11: 3 documents are named "lines.txt" (the first is doc 0): give an id
  doc lines.txt
      ^
Use ":help doc" for usage.
error: line 12: --lines: lines are numbered from 1
  doc 0 --lines 0:2
                ^
Use ":help doc" for usage.
error: line 13: --temperature: -1 is out of range (0 to 1e+06)
  generate --temperature -1 "x"
                         ^
Use ":help generate" for usage.
error: line 14: --top-p: 0 is out of range (1e-09 to 1)
  generate --top-p 0 "x"
                   ^
Use ":help generate" for usage.
error: line 15: --seed: not an integer: "banana"
  generate --seed banana "x"
                  ^
Use ":help generate" for usage.
error: line 16: --stop: empty string
  generate --stop "" "x"
                  ^
Use ":help generate" for usage.
error: line 17: "and" is not an operator: the operators are AND and OR, in capitals (there is no NOT); quote it to search for the word
  search "the" and "dog"
               ^
Use ":help search" for usage.
error: line 18: "NOT" is not an operator: the operators are AND and OR, in capitals (there is no NOT); quote it to search for the word
  search NOT "dog"
         ^
Use ":help search" for usage.
error: line 19: --lines: the start 5 is after the end 2
  doc 0 --lines 5:2
                ^
Use ":help doc" for usage.
error: line 20: --range: the start 9 is after the end 3
  doc 0 --range 9:3
                ^
Use ":help doc" for usage.
error: line 21: the model has nothing to continue an empty prompt with (no estimate, or only the end of a document; interpolation never backs off to the unigram): give a prompt whose end occurs in the corpus, or use --infgram
  generate --max 5 --seed 1 ""
                            ^
Use ":help generate" for usage.
error: line 22: --max-context: 0 leaves the model no context, and interpolation never backs off to the unigram: give --max-context 1 or more, or use --infgram
  generate --max 5 --seed 1 --max-context 0 "the\n"
                                          ^
Use ":help generate" for usage.
--- status 1

=== --step out of range, and model options that --step would ignore
$ args -d docs
generate --seed 1 --max 5 "the"
explain --step 6
explain --step 0
explain --step 2 --n 3
explain --last --interp 1
--- stdout
the log.
[5 chars in 0.0 ms · interpolation, 2 levels · seed 1 · stop: max · median effective n 6 · longest verbatim span 5 bytes (doc 4, …/data/animals.txt#2 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
--- stderr
error: line 2: --step 6 is out of range: the last generation has 5 characters
  explain --step 6
                 ^
Use ":help explain" for usage.
error: line 3: --step: 0 is out of range (at least 1)
  explain --step 0
                 ^
Use ":help explain" for usage.
error: line 4: --n: --step and --last explain the generation with its own model (interpolation, 2 levels); drop the option
  explain --step 2 --n 3
                   ^
Use ":help explain" for usage.
error: line 5: --interp: --step and --last explain the generation with its own model (interpolation, 2 levels); drop the option
  explain --last --interp 1
                 ^
Use ":help explain" for usage.
--- status 1

=== spans with sources ranked by BM25: the best document first, identical ones folded
:dataset add ranked {DATA}/ranked.txt --format lines
build ranked
load ranked
spans --rank bm25 --min-len 7 --positions 3 "the cat sat on the mat"
spans --rank bm25 --min-len 7 --positions 4 "the mat"
spans --rank bm25 --min-len 7 --positions 3 --candidates 2 "the mat"
spans --rank bm25 --k1 0 "the cat sat on the mat"
spans --rank sideways "the cat"
spans --rank bm25 --b 2 "the cat"
spans --rank bm25 --k1 0x10 "the cat"
load shakespeare
spans --rank bm25 --min-len 1 --candidates 100000 --positions 0 "e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e"

--- stdout
added ranked: 1 source (run: build ranked)
built ranked: 183 B, 5 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded ranked: 183 B, 5 docs, 1 shard
1 span of at least 7 bytes
   start length    count  text / sources
       0     22        2  "the cat sat on the mat"
                           doc 0 …/data/ranked.txt#1 line 1  bm25 2.10 (+1 identical)
novelty: 0.0% of the 22 bytes are not inside a corpus span of 7 bytes or more
1 span of at least 7 bytes
   start length    count  text / sources
       0      7        9  "the mat"
                           doc 4 …/data/ranked.txt#5 line 1  bm25 0.29
                           doc 0 …/data/ranked.txt#1 line 1  bm25 0.22 (+1 identical)
                           doc 1 …/data/ranked.txt#2 line 1  bm25 0.20
                           doc 3 …/data/ranked.txt#4 line 1  bm25 0.20
novelty: 0.0% of the 7 bytes are not inside a corpus span of 7 bytes or more
1 span of at least 7 bytes
   start length    count  text / sources
       0      7        9  "the mat"
                           doc 0 …/data/ranked.txt#1 line 1  bm25 0.22
                           doc 1 …/data/ranked.txt#2 line 1  bm25 0.20
                           (ranked among the first 2 of 9 occurrences)
novelty: 0.0% of the 7 bytes are not inside a corpus span of 7 bytes or more
1 span of at least 8 bytes
   start length    count  text / sources
       0     22        2  "the cat sat on the mat"
                           doc 0 …/data/ranked.txt#1 line 1  bm25 1.88 (+1 identical)
novelty: 0.0% of the 22 bytes are not inside a corpus span of 8 bytes or more
loaded shakespeare: 1.1 MB, 1 doc, 1 shard
--- stderr
error: line 8: --rank: expected none or bm25
  spans --rank sideways "the cat"
               ^
Use ":help spans" for usage.
error: line 9: --b: 2 is out of range (0 to 1)
  spans --rank bm25 --b 2 "the cat"
                        ^
Use ":help spans" for usage.
error: line 10: --k1: not a number: "0x10"
  spans --rank bm25 --k1 0x10 "the cat"
                         ^
Use ":help spans" for usage.
error: line 12: --candidates: 2099 spans would list 1032708 occurrences (at most 1000000): lower it, or raise --min-len or set --max-count
  spans --rank bm25 --min-len 1 --candidates 100000 --positions 0 "e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e e"
                                             ^
Use ":help spans" for usage.
--- status 1

=== ranked spans as JSON: score and duplicates on each source
$ args --json -d ranked
spans --rank bm25 --min-len 7 --positions 4 "a cat sat on the mat"
--- stdout
{"command":"spans","dataset":"ranked","spans":[{"start":1,"length":19,"count":2,"text":" cat sat on the mat","sources":[{"doc":0,"name":"{DATA}/ranked.txt","offset":3,"line":1,"column":4,"source_line":1,"length":19,"score":1.9665663612283744,"duplicates":1}]}],"novelty":{"n":7,"uncovered_fraction":0.05},"searches":21,"elapsed_ms":0}
--- stderr
--- status 0

=== an operation's options are named as typed, with dashes, in carets and warnings
$ args -d shakespeare
generate --seed 1 --max 10 "ROMEO:"
explain --step 3 --min-len 2
explain --last --max-len=2
explain --max-context 5 --min-len 3 --help
--- stdout
ROMEO:
More ligh
[10 chars in 0.0 ms · interpolation, 2 levels · seed 1 · stop: max · median effective n 12 · longest verbatim span 10 bytes (doc 0, …/datasets/tinyshakespeare.txt line 16569) · 0% of output inside corpus spans ≥ 20 bytes]
explain [MODEL OPTIONS] [--top K] [--positions K] [--width W] [--bytes] TEXT | --ids A,B,C | --step N | --last
    why the model predicts what it predicts

    Shows the context with its matched suffix, the n-gram profile (for every
    suffix length, how often it occurs and how often it is followed by the
    predicted symbol), the top candidates with the share each level
    contributes, and for each candidate the corpus positions where the suffix
    was followed by it (suffix and continuation highlighted). On a token
    dataset the context is token ids (--ids, or --step/--last after
    generate): lengths count tokens, candidates are tokens, positions are a
    document and a token offset.

    --ids A,B,C            token datasets: the context as token ids,
                           comma-separated (lengths then count tokens)
    --infgram              the ∞-gram (default): the longest suffix of the
                           context that occurs
    --n N                  fixed n-gram: the last N-1 bytes of context, no
                           backoff
    --alpha A              Laplace smoothing over the bytes that keep the
                           text valid UTF-8 (∞-gram, n-gram)
    --weighted linear|quadratic|exponential|sigmoid mixture of the
                           distributions at every suffix length
    --min-len L            weighted: shortest suffix length (default 1)
    --max-len L            weighted: longest suffix length (default ℓ*)
    --beta B               weighted exponential: base (default 2)
    --interp K             selective back-off interpolation over K kept
                           levels: K ≥ 1, or -1 for all (0 is refused)
    --sbi                  with --interp: the exact published SBI conventions
                           (<end> not counted)
    --max-context L        use at most the last L bytes of context (-1: all;
                           default: all, and 100 for eval)
    --step N               explain the N-th character of the last generation
                           (with the generation's own model)
    --last                 explain the prediction after the last generation
                           (with the generation's own model)
    --positions K          corpus occurrences per candidate (default 3)
    --top K                candidates explained (default 5)
    --width W              snippet bytes on each side (default 24)
    --bytes                next bytes instead of characters

    example: explain --step 12
--- stderr
error: line 2: --min-len: --step and --last explain the generation with its own model (interpolation, 2 levels); drop the option
  explain --step 3 --min-len 2
                   ^
Use ":help explain" for usage.
error: line 3: --max-len: --step and --last explain the generation with its own model (interpolation, 2 levels); drop the option
  explain --last --max-len=2
                 ^
Use ":help explain" for usage.
warning: line 4: option --max-context was ignored
warning: line 4: option --min-len was ignored
--- status 1

=== explain: the sources' snippets of every candidate together are bounded, as count's listing is
$ args -d shakespeare
explain --top 256 --positions 1000 --width 10000 ""
explain --top 2 --positions 1 --width 5 "the"
--- stdout
context: "the"
model: ∞-gram   effective n: 4   suffix count: 10495   sparse: no
n-gram profile (suffix length ℓ: occurrences, and how many continue with ' ')
        ℓ      count   → next
          1      94611      27643  ████████████████████████
          2      18203       7762  ████████████████████▌
          3      10495       5364  ███████████████████▍
candidates:
  ' '      count 5364     prob 0.5111
      …/tinyshakespeare.txt:14:49 @238  …y to the peopl…
      (5363 more)
  'r'      count 2017     prob 0.1922
      …/tinyshakespeare.txt:2:26 @40  …y further, hea…
      (2016 more)
--- stderr
error: line 1: --positions: the sources of the candidates with --width 10000 would make an answer of over 256 MiB (each costs its match, twice the width and 512 bytes): list fewer, explain fewer candidates (--top), or narrow --width
  explain --top 256 --positions 1000 --width 10000 ""
                                ^
Use ":help explain" for usage.
--- status 1
