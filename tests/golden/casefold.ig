# Case-folded datasets: the index holds the Unicode case folding of the text (after NFC),
# so counts ignore case (ß and SS, İ and i̇, Σ and ς and σ, the ﬁ ligature and fi) while
# positions, snippets and doc show the original text. The lines become documents spread
# over several shards (--shard-size 100). Predict and generate work on the folded bytes.

=== add, build, info
:dataset add cf {DATA}/casefold.txt --format lines --casefold
build cf --shard-size 100
:dataset info cf
--- stdout
added cf: 1 source (run: build cf)
built cf: 227 B, 6 docs, 4 shards in 0.00 s (0.0 MB/s)
name        cf
status      built
index       {HOME}/indexes/cf-ID
bytes       227 B (227 bytes)
documents   6
shards      4
skipped     0 files
format      lines, NFC, case-folded
created     (time)
built       (time)
sources     {DATA}/casefold.txt (lines)
--- stderr
--- status 0

=== counts in any case, positions in the original text
$ args -d cf
count --positions 5 "romeo"
count --positions 5 "ROMEO"
count --positions 9 "ss"
count --positions 3 "STRAẞE"
count --positions 3 "ISTANBUL"
count --positions 3 "İstanbul"
count --positions 3 "σοφος"
count --positions 3 "Σοφός"
count --positions 3 "CAFÉ"
count --positions 2 "fine"
--- stdout
4
  …/data/casefold.txt#1:1:1 @0  ROMEO:
  …/data/casefold.txt#2:1:3 @2  O Romeo, Romeo! wherefore a…
  …/data/casefold.txt#2:1:10 @9  O Romeo, Romeo! wherefore art thou…
  …/data/casefold.txt#2:1:36 @35  …wherefore art thou romeo?
4
  …/data/casefold.txt#1:1:1 @0  ROMEO:
  …/data/casefold.txt#2:1:3 @2  O Romeo, Romeo! wherefore a…
  …/data/casefold.txt#2:1:10 @9  O Romeo, Romeo! wherefore art thou…
  …/data/casefold.txt#2:1:36 @35  …wherefore art thou romeo?
5
  …/data/casefold.txt#3:1:9 @8  Die Straße heißt STRASSE; SS u…
  …/data/casefold.txt#3:1:15 @15  Die Straße heißt STRASSE; SS und ß.
  …/data/casefold.txt#3:1:22 @23  …e Straße heißt STRASSE; SS und ß.
  …/data/casefold.txt#3:1:27 @28  …aße heißt STRASSE; SS und ß.
  …/data/casefold.txt#3:1:34 @35  …ißt STRASSE; SS und ß.
2
  …/data/casefold.txt#3:1:5 @4  Die Straße heißt STRASSE; SS…
  …/data/casefold.txt#3:1:18 @19  …ie Straße heißt STRASSE; SS und ß.
2
  …/data/casefold.txt#4:1:11 @11  İstanbul, ISTANBUL und istanbul.
  …/data/casefold.txt#4:1:24 @24  …bul, ISTANBUL und istanbul.
1
  …/data/casefold.txt#4:1:1 @0  İstanbul, ISTANBUL und ist…
1
  …/data/casefold.txt#5:1:3 @3  Ο ΣΟΦΟΣ λέγει· ο …
1
  …/data/casefold.txt#5:1:18 @30  … λέγει· ο σοφός λέγει· ὁ…
3
  …/data/casefold.txt#6:1:1 @0  Café CAFÉ café — ﬁn…
  …/data/casefold.txt#6:1:6 @6  Café CAFÉ café — ﬁne FINE…
  …/data/casefold.txt#6:1:11 @12  Café CAFÉ café — ﬁne FINE.
2
  …/data/casefold.txt#6:1:18 @22  …fé CAFÉ café — ﬁne FINE.
  …/data/casefold.txt#6:1:22 @28  …AFÉ café — ﬁne FINE.
--- stderr
--- status 0

=== JSON positions: original offsets, lines and columns
$ args -d cf --json
count --positions 3 "STRASSE"
--- stdout
{"command":"count","dataset":"cf","query":"strasse","count":2,"positions":[{"doc":2,"name":"{DATA}/casefold.txt","offset":4,"line":1,"column":5,"source_line":3,"length":7,"snippet":"Die Straße heißt STRASSE; SS und ß.","hl0":4,"hl1":11},{"doc":2,"name":"{DATA}/casefold.txt","offset":19,"line":1,"column":18,"source_line":3,"length":7,"snippet":"Die Straße heißt STRASSE; SS und ß.","hl0":19,"hl1":26}],"elapsed_ms":0}
--- stderr
--- status 0

=== predict over the folded bytes
$ args -d cf
predict "rome"
predict "stra"
--- stdout
context: "rome"
model: ∞-gram   effective n: 5   suffix count: 4   sparse: yes
  next          count     prob
  'o'               4    1.000  ████████████████████
context: "stra"
model: ∞-gram   effective n: 5   suffix count: 2   sparse: yes
  next          count     prob
  's'               2    1.000  ████████████████████
--- stderr
--- status 0

=== generate: the prompt and the stop strings are folded as queries are
$ args -d cf
generate --max 12 --seed 1 --stop "SE" "STRA"
generate --max 12 --seed 1 --stop "se" "stra"
--- stdout
stras
[1 chars in 0.0 ms · interpolation, 2 levels · seed 1 · stop: stop · median effective n 5 · longest verbatim span 1 bytes (doc 2, …/data/casefold.txt#3 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
stras
[1 chars in 0.0 ms · interpolation, 2 levels · seed 1 · stop: stop · median effective n 5 · longest verbatim span 1 bytes (doc 2, …/data/casefold.txt#3 line 1) · 0% of output inside corpus spans ≥ 20 bytes]
--- stderr
--- status 0

=== doc shows the original bytes
$ args -d cf
doc 2
doc 3 --range 0:9
--- stdout
doc 2 · {DATA}/casefold.txt#3 · 38 bytes
     1  Die Straße heißt STRASSE; SS und ß.
doc 3 · {DATA}/casefold.txt#4 · 33 bytes
     1  İstanbul
--- stderr
--- status 0

=== the JSON of doc and info
$ args -d cf --json
doc 4
:dataset info cf
--- stdout
{"command":"doc","doc":4,"name":"{DATA}/casefold.txt","source_line":5,"bytes":70,"first_line":1,"offset":0,"text":"Ο ΣΟΦΟΣ λέγει· ο σοφός λέγει· ὁ σοφὸς.","elapsed_ms":0}
{"command":":dataset","name":"cf","status":"built","index_path":"{HOME}/indexes/cf-ID","bytes":227,"documents":6,"shards":4,"skipped_files":0,"format":"lines","normalize":true,"casefold":true,"sources":[{"kind":"lines","path":"{DATA}/casefold.txt","size":228}],"line_index_missing":0,"lcp_missing":0,"created_at":"(time)","built_at":"(time)","elapsed_ms":0}
--- stderr
--- status 0

=== spans and search find the sources in the original text
$ args -d cf
spans "O ROMEO, romeo! WHEREFORE"
search "ROMEO" AND "Thou"
search ("ROMEO" OR "romeo" OR "Romeo") AND "Thou"
--- stdout
1 span of at least 8 bytes
   start length    count  text / sources
       0     25        1  "o romeo, romeo! wherefore"
                           doc 1 …/data/casefold.txt#2 line 1
novelty: 0.0% of the 25 bytes are not inside a corpus span of 8 bytes or more
1 document matches
  doc 1  …/data/casefold.txt#2  4 hits, first at line 1
      O Romeo, Romeo! wherefore art thou ro…
1 document matches
  doc 1  …/data/casefold.txt#2  4 hits, first at line 1
      O Romeo, Romeo! wherefore art thou ro…
--- stderr
--- status 0

=== eval and contam read a file folded, as the corpus is (and as --text is)
$ args -d cf
eval {DATA}/casefold-eval.txt
eval --text "DIE STRASSE HEISST STRASSE\nROMEO, ROMEO! WHEREFORE ART THOU ROMEO\n"
contam {DATA}/casefold-eval.txt --n 2
--- stdout
eval {DATA}/casefold-eval.txt (66 bytes) · ∞-gram · context ≤ 100 bytes
  scored positions  65
  perplexity        2.25
  bits per byte     1.1669
  zero probability  2 positions (3.08%), each counted at the floor P = 1e-10
                    the floor, not the model, dominates these figures
                    (pure ∞-gram perplexity is infinite on this text)
  ∞-gram agreement  90.8% (sparse: 96.7% of 61, non-sparse: 0.0% of 4)
  effective n
      1          1 ████████████████████
      2          2 ████████████████████████████████████████
      3          2 ████████████████████████████████████████
      4          2 ████████████████████████████████████████
      5          2 ████████████████████████████████████████
      6          2 ████████████████████████████████████████
      7          2 ████████████████████████████████████████
      8          2 ████████████████████████████████████████
      9          2 ████████████████████████████████████████
     10          2 ████████████████████████████████████████
     11          2 ████████████████████████████████████████
     12          2 ████████████████████████████████████████
     13          2 ████████████████████████████████████████
     14          2 ████████████████████████████████████████
     15          2 ████████████████████████████████████████
     16          2 ████████████████████████████████████████
     17          2 ████████████████████████████████████████
     18          2 ████████████████████████████████████████
     19          2 ████████████████████████████████████████
     20          2 ████████████████████████████████████████
     21          2 ████████████████████████████████████████
     22          2 ████████████████████████████████████████
     23          2 ████████████████████████████████████████
     24          2 ████████████████████████████████████████
     25          2 ████████████████████████████████████████
     26          2 ████████████████████████████████████████
     27          2 ████████████████████████████████████████
     28          1 ████████████████████
     29          1 ████████████████████
     30          1 ████████████████████
     31          1 ████████████████████
     32          1 ████████████████████
     33          1 ████████████████████
     34          1 ████████████████████
     35          1 ████████████████████
     36          1 ████████████████████
     37          1 ████████████████████
     38          1 ████████████████████
     39          1 ████████████████████
eval --text (66 bytes) · ∞-gram · context ≤ 100 bytes
  scored positions  65
  perplexity        2.25
  bits per byte     1.1669
  zero probability  2 positions (3.08%), each counted at the floor P = 1e-10
                    the floor, not the model, dominates these figures
                    (pure ∞-gram perplexity is infinite on this text)
  ∞-gram agreement  90.8% (sparse: 96.7% of 61, non-sparse: 0.0% of 4)
  effective n
      1          1 ████████████████████
      2          2 ████████████████████████████████████████
      3          2 ████████████████████████████████████████
      4          2 ████████████████████████████████████████
      5          2 ████████████████████████████████████████
      6          2 ████████████████████████████████████████
      7          2 ████████████████████████████████████████
      8          2 ████████████████████████████████████████
      9          2 ████████████████████████████████████████
     10          2 ████████████████████████████████████████
     11          2 ████████████████████████████████████████
     12          2 ████████████████████████████████████████
     13          2 ████████████████████████████████████████
     14          2 ████████████████████████████████████████
     15          2 ████████████████████████████████████████
     16          2 ████████████████████████████████████████
     17          2 ████████████████████████████████████████
     18          2 ████████████████████████████████████████
     19          2 ████████████████████████████████████████
     20          2 ████████████████████████████████████████
     21          2 ████████████████████████████████████████
     22          2 ████████████████████████████████████████
     23          2 ████████████████████████████████████████
     24          2 ████████████████████████████████████████
     25          2 ████████████████████████████████████████
     26          2 ████████████████████████████████████████
     27          2 ████████████████████████████████████████
     28          1 ████████████████████
     29          1 ████████████████████
     30          1 ████████████████████
     31          1 ████████████████████
     32          1 ████████████████████
     33          1 ████████████████████
     34          1 ████████████████████
     35          1 ████████████████████
     36          1 ████████████████████
     37          1 ████████████████████
     38          1 ████████████████████
     39          1 ████████████████████
contam {DATA}/casefold-eval.txt: 2 items, 2-grams of words
    item   line  n-grams  in corpus  overlap  longest match  first source
       1      1        3          3   100.0%       26 bytes  doc 2 …/data/casefold.txt#3 line 1
       2      2        5          5   100.0%       38 bytes  doc 1 …/data/casefold.txt#2 line 1
2 of 2 items contaminated (≥ 80%), 0 partly (≥ 20%)
8 n-grams, 8 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-12590.2
--- stderr
--- status 0

=== contam of a case-folded eval dataset reads its original text
:dataset add plain {DATA}/casefold.txt --format lines
build plain
:dataset add cfe {DATA}/casefold.txt --format lines --casefold
build cfe
load plain
contam --eval-dataset cfe --n 2
--- stdout
added plain: 1 source (run: build plain)
built plain: 227 B, 6 docs, 1 shard in 0.00 s (0.0 MB/s)
added cfe: 1 source (run: build cfe)
built cfe: 227 B, 6 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded plain: 227 B, 6 docs, 1 shard
contam dataset cfe: 6 items, 2-grams of words
     doc   line  n-grams  in corpus  overlap  longest match  first source
       0      1        1          1   100.0%        6 bytes  doc 0 …/data/casefold.txt#1 line 1
       1      2        6          6   100.0%       41 bytes  doc 1 …/data/casefold.txt#2 line 1
       2      3        6          6   100.0%       38 bytes  doc 2 …/data/casefold.txt#3 line 1
       3      4        3          3   100.0%       33 bytes  doc 3 …/data/casefold.txt#4 line 1
       4      5        7          7   100.0%       70 bytes  doc 4 …/data/casefold.txt#5 line 1
       5      6        5          5   100.0%       33 bytes  doc 5 …/data/casefold.txt#6 line 1
6 of 6 items contaminated (≥ 80%), 0 partly (≥ 20%)
28 n-grams, 28 distinct, each counted exactly; BFF's 256 GiB Bloom filter (k = 1525) on them: false-positive rate 10^-11760.5
--- stderr
--- status 0
