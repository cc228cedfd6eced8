# Token datasets of our own: ids given as a flat u16 array or as JSONL (the ids of
# tokens-vocab.json: the 3, cat 260, sat 517, …), and text tokenised with a SentencePiece
# model (data/shakes-500.model: spm_train --vocab_size=500 --model_type=bpe
# --normalization_rule_name=identity on Tiny Shakespeare; tests/scripts/token_build_test.py
# trains its own at test time). Then what is refused.

=== ids: add, build, query
:dataset add toks {DATA}/token-ids.u16 --format ids --dtype u16 --separator 65535 --vocab {DATA}/tokens-vocab.json
build toks
load toks
count --ids 3,260
count --ids 517,774,3,31
predict --ids 517,774,3
doc 1
--- stdout
added toks: 1 source (run: build toks)
built toks: 46 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded toks: 46 B, 3 docs, 1 shard
1
2
context: "sat on the "
model: ∞-gram   effective n: 4   suffix count: 2   sparse: yes
          id  token               count     prob
          31  "mat "                  2    1.000  ████████████████████
doc 1 · {DATA}/token-ids.u16#2 · 7 tokens
metadata {"path":"{DATA}/token-ids.u16","linenum":1}
     1  the dog sat on the mat . 
--- stderr
--- status 0

=== jsonl-ids, no vocabulary
:dataset add toks2 {DATA}/token-ids.jsonl --format jsonl-ids --field ids
build toks2
load toks2
count --ids 545,802
predict --ids 3
:dataset info toks2
--- stdout
added toks2: 1 source (run: build toks2)
built toks2: 46 B, 3 docs, 1 shard in 0.00 s (0.0 MB/s)
loaded toks2: 46 B, 3 docs, 1 shard
1
context: "[3]"
model: ∞-gram   effective n: 2   suffix count: 4   sparse: no
          id  token               count     prob
          31  "[31]"                  2    0.500  ████████████████████
         260  "[260]"                 1    0.250  ██████████
         802  "[802]"                 1    0.250  ██████████
name        toks2
status      built
index       {HOME}/indexes/toks2-ID
bytes       46 B (46 bytes)
documents   3
shards      1
skipped     0 files
format      text, not normalised
tokens      ids in JSONL field "ids", vocabulary - (ids shown as numbers)
stored      u16 ids (23 tokens, separators included)
created     (time)
built       (time)
sources     {DATA}/token-ids.jsonl (file)
--- stderr
--- status 0

=== SentencePiece: build, count, predict, generate, eval, info
$ sh cp {DATA}/shakes-500.model {TMP}/shakes.model
:dataset add ts-t {DATASETS}/tinyshakespeare.txt --tokenizer {TMP}/shakes.model
build ts-t --jobs 2
load ts-t
count "wherefore art thou"
predict "ROMEO:"
generate "ROMEO:" --max 12 --seed 3
eval --text "First Citizen: Before we proceed any further, hear me speak."
eval {DATASETS}/tinyshakespeare.txt --range 99%:
:dataset info ts-t
--- stdout
added ts-t: 1 source (run: build ts-t)
built ts-t: 956.8 kB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded ts-t: 956.8 kB, 1 doc, 1 shard
1
context: " ROMEO:"
model: ∞-gram   effective n: 6   suffix count: 163   sparse: no
          id  token               count     prob
          19  " I"                   21    0.129  ████████████████████
          40  " A"                   17    0.104  ████████████████▎
          96  " O"                   12    0.074  ███████████▍
         130  " N"                    9    0.055  ████████▋
          70  " S"                    8    0.049  ███████▋
         223  " What"                 8    0.049  ███████▋
         104  " G"                    7    0.043  ██████▋
          54  " W"                    6    0.037  █████▊
          79  " And"                  6    0.037  █████▊
         111  " The"                  5    0.031  ████▊
  (28 more)
 ROMEO: Nay, good goose, bite not
[12 tokens in 0.0 ms · ∞-gram · seed 3 · stop: max · median effective n 12 · longest verbatim span 12 tokens (doc 0, …/datasets/tinyshakespeare.txt token 211460) · 0% of output inside corpus spans ≥ 20 tokens]
eval --text (25 tokens) · ∞-gram · context ≤ 100 tokens
  scored positions  24
  perplexity        1.26 (per token)
  bits per token    0.3331
  bits per byte     0.1454 (of 55 bytes of text)
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  91.7% (sparse: 100.0% of 21, non-sparse: 33.3% of 3)
  effective n
      1          0 
      2          1 ████████████████████████████████████████
      3          1 ████████████████████████████████████████
      4          1 ████████████████████████████████████████
      5          1 ████████████████████████████████████████
      6          1 ████████████████████████████████████████
      7          1 ████████████████████████████████████████
      8          1 ████████████████████████████████████████
      9          1 ████████████████████████████████████████
     10          1 ████████████████████████████████████████
     11          1 ████████████████████████████████████████
     12          1 ████████████████████████████████████████
     13          1 ████████████████████████████████████████
     14          1 ████████████████████████████████████████
     15          1 ████████████████████████████████████████
     16          1 ████████████████████████████████████████
     17          1 ████████████████████████████████████████
     18          1 ████████████████████████████████████████
     19          1 ████████████████████████████████████████
     20          1 ████████████████████████████████████████
     21          1 ████████████████████████████████████████
     22          1 ████████████████████████████████████████
     23          1 ████████████████████████████████████████
     24          1 ████████████████████████████████████████
     25          1 ████████████████████████████████████████
eval {DATASETS}/tinyshakespeare.txt (5108 tokens) · ∞-gram · context ≤ 100 tokens
  scored positions  5107
  perplexity        1.00 (per token)
  bits per token    0.0020
  bits per byte     0.0009 (of 11135 bytes of text)
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  99.9% (sparse: 100.0% of 5103, non-sparse: 25.0% of 4)
  effective n
      1          0 
      2          1 
      3          1 
      4          1 
      5          1 
      6          1 
      7          1 
      8          1 
      9          1 
     10          1 
     11          1 
     12          1 
     13          1 
     14          1 
     15          1 
     16          1 
     17          1 
     18          1 
     19          1 
     20          1 
     21          1 
     22          1 
     23          1 
     24          1 
     25          1 
     26          1 
     27          1 
     28          1 
     29          1 
     30          1 
     31          1 
     32          1 
     33          1 
     34          1 
     35          1 
     36          1 
     37          1 
     38          1 
     39          1 
     40          1 
     41          1 
     42          1 
     43          1 
     44          1 
     45          1 
     46          1 
     47          1 
     48          1 
     49          1 
     50          1 
     51          1 
     52          1 
     53          1 
     54          1 
     55          1 
     56          1 
     57          1 
     58          1 
     59          1 
     60          1 
     61          1 
     62          1 
     63          1 
     64          1 
     65          1 
     66          1 
     67          1 
     68          1 
     69          1 
     70          1 
     71          1 
     72          1 
     73          1 
     74          1 
     75          1 
     76          1 
     77          1 
     78          1 
     79          1 
     80          1 
     81          1 
     82          1 
     83          1 
     84          1 
     85          1 
     86          1 
     87          1 
     88          1 
     89          1 
     90          1 
     91          1 
     92          1 
     93          1 
     94          1 
     95          1 
     96          1 
     97          1 
     98          1 
     99          1 
    100          1 
    101       5008 ████████████████████████████████████████
name        ts-t
status      built
index       {HOME}/indexes/ts-t-ID
bytes       956.8 kB (956756 bytes)
documents   1
shards      1
skipped     0 files
format      text, not normalised
tokens      tokenised by {TMP}/shakes.model (SentencePiece, checksum bfc6b251bf5bac95)
stored      u16 ids (478378 tokens, separators included)
created     (time)
built       (time)
sources     {DATASETS}/tinyshakespeare.txt (file)
--- stderr
--- status 0

=== refused: bad inputs name the file and the offset or line
$ sh printf 'a\000b\000\377\377c' > {TMP}/odd.u16
$ sh printf 'a\000\377\377b\000' > {TMP}/nosep.u16
$ sh printf '{"ids": [1, 2]}\n{"ids": "3 4"}\n' > {TMP}/type.jsonl
$ sh printf '{"ids": [1, 2]}\n{"ids": [3,\n' > {TMP}/bad.jsonl
$ sh printf '\003\000\377\377\000\004\377\377' > {TMP}/big.u16
:dataset add odd {TMP}/odd.u16 --format ids --dtype u16 --separator 65535
build odd
:dataset add nosep {TMP}/nosep.u16 --format ids --dtype u16 --separator 65535
build nosep
:dataset add type {TMP}/type.jsonl --format jsonl-ids
build type
:dataset add bad {TMP}/bad.jsonl --format jsonl-ids
build bad
:dataset add big {TMP}/big.u16 --format ids --dtype u16 --separator 65535 --vocab {DATA}/tokens-vocab.json
build big
:dataset add nodtype {TMP}/odd.u16 --format ids --separator 65535
:dataset add wide {TMP}/odd.u16 --format ids --dtype u16 --separator 70000
:dataset add both {DATASETS}/tinyshakespeare.txt --tokenizer {TMP}/shakes.model --vocab {DATA}/tokens-vocab.json
:dataset add notmodel {DATASETS}/tinyshakespeare.txt --tokenizer {DATA}/animals.txt
:dataset compose both toks toks2
:dataset verify toks
load toks
count "the cat"
--- stdout
added odd: 1 source (run: build odd)
added nosep: 1 source (run: build nosep)
added type: 1 source (run: build type)
added bad: 1 source (run: build bad)
added big: 1 source (run: build big)
toks: index verified, all checksums match
loaded toks: 46 B, 3 docs, 1 shard
--- stderr
error: line 2: {TMP}/odd.u16: 7 bytes, not a whole number of 2-byte ids (1 bytes left over at byte offset 6)
error: line 4: {TMP}/nosep.u16: the last document does not end with the separator 65535 (its ids from byte offset 4 to the end)
error: line 6: {TMP}/type.jsonl: line 2: field "ids" is not an array of ids
error: line 8: {TMP}/bad.jsonl: line 2: bad JSON: ']' expected near end of file
error: line 10: {TMP}/big.u16: byte offset 4: id 1024 is beyond the vocabulary (831 ids)
error: line 11: --format ids needs --dtype u16|u32 and --separator ID
error: line 12: --separator 70000 does not fit a u16 id
error: line 13: --vocab applies to :dataset add with --format ids or jsonl-ids (a --tokenizer is its own vocabulary)
  :dataset add both {DATASETS}/tinyshakespeare.txt --tokenizer {TMP}/shakes.model --vocab {DATA}/tokens-vocab.json
                                                                                  ^
Use ":help :dataset" for usage.
error: line 14: {DATA}/animals.txt: neither a JSON vocabulary nor a SentencePiece model
error: line 15: toks is a token dataset: compositions are of datasets of bytes
error: line 18: this is a token dataset without a tokenizer: give token ids with --ids
--- status 1

=== the tokenizer changed, then missing
$ sh printf 'x' >> {TMP}/shakes.model
load ts-t
:dataset check ts-t
--- stdout
ts-t is stale: its tokenizer {TMP}/shakes.model changed since the dataset was added (checksum a48d99405db7b4f4, was bfc6b251bf5bac95): restore it, or :dataset remove ts-t and add it again
--- stderr
error: line 1: cannot load ts-t: dataset ts-t: its tokenizer {TMP}/shakes.model changed since the dataset was added (checksum a48d99405db7b4f4, was bfc6b251bf5bac95): restore it, or :dataset remove ts-t and add it again
--- status 1

=== the tokenizer missing
$ sh rm {TMP}/shakes.model
load ts-t
--- stdout
--- stderr
error: line 1: cannot load ts-t: dataset ts-t: its tokenizer {TMP}/shakes.model cannot be read: {TMP}/shakes.model: cannot open: No such file or directory
--- status 1
