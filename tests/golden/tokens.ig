# Token datasets: indexes of token ids in the infini-gram layout attached read-only (v4: one
# directory with shard suffixes; v6: one directory per shard), queried in tokens. The ids
# (the: 3, cat: 260, sat: 517, …) are spread over two bytes, so that the index's byte order
# is not the ids' order. Then what is refused, and what attach checks.

=== attach and describe
:dataset attach t4 {DATA}/tokens-v4 --format infini-gram --vocab {DATA}/tokens-vocab.json
:dataset attach t6 {DATA}/tokens-v6 --format infini-gram --dtype u16
:dataset list
:dataset info t4
:dataset check t4
--- stdout
attached t4: 70 B of u16 token ids, 4 docs, 1 shard, with a vocabulary (load t4 to query it)
attached t6: 70 B of u16 token ids, 4 docs, 2 shards (load t6 to query it)
  name           status         bytes documents shards  sources
  t4             built           70 B         4      1  …/data/tokens-v4
  t6             built           70 B         4      2  …/data/tokens-v6
name        t4
status      built
attached    {DATA}/tokens-v4 (infini-gram, read-only)
tokens      u16 ids (35 tokens)
bytes       70 B (70 bytes)
documents   4
shards      1
vocabulary  {DATA}/tokens-vocab.json
created     (time)
next tokens - (no table: :dataset prepare t4 makes one)
t4 is up to date
--- stderr
--- status 0

=== counts and positions in tokens
load t4
count --ids 3,260
count --ids 260 --positions 5 --width 2
count --ids 288,65535
count --ids 65535
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
3
4
  story-0.txt#1 doc 0 token 1  the cat sat on 
  story-2.txt#1 doc 2 token 4  saw the cat and the 
  story-2.txt#1 doc 2 token 7  and the cat ran . 
  story-3.txt#1 doc 3 token 1  a cat sat on 
4
4
--- stderr
--- status 0

=== next tokens
load t4
predict --ids 3
predict --ids 545,802,59,316,3
predict --ids 802,260 --n 2
predict --ids 3 --alpha 0.5 --top 3
predict --ids 545,802,59 --interp 2 --top 4
predict --ids 3,260 --weighted quadratic --top 3
backoff --ids 802,260 --top 4
prob --ids 545 --next-ids 802,59,316
prob --ids "" --next-ids 3,260,517 --n 2
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
context: "the "
model: ∞-gram   effective n: 2   suffix count: 6   sparse: no
          id  token               count     prob
         260  "cat "                  3    0.500  ████████████████████
          31  "mat "                  1    0.167  ██████▋
         573  "park "                 1    0.167  ██████▋
         802  "dog "                  1    0.167  ██████▋
context: "a dog ran to the "
model: ∞-gram   effective n: 6   suffix count: 1   sparse: yes
          id  token               count     prob
         573  "park "                 1    1.000  ████████████████████
context: "dog cat "
model: 2-gram   effective n: 2   suffix count: 4   sparse: no
          id  token               count     prob
         517  "sat "                  2    0.500  ████████████████████
          59  "ran "                  1    0.250  ██████████
         830  "and "                  1    0.250  ██████████
context: "the "
model: ∞-gram, Laplace α=0.5   effective n: 2   suffix count: 6   sparse: no
          id  token               count     prob
         260  "cat "                  3    0.008  ████████████████████
          31  "mat "                  1    0.004  ████████▋
         573  "park "                 1    0.004  ████████▋
  (1 more)
  unseen symbols (smoothing): 0.981
context: "a dog ran "
model: interpolation, 2 levels   effective n: 4   suffix count: 1   sparse: no
levels: ℓ=3 (1) ℓ=1 (2)
          id  token               count     prob
         316  "to "                   1    0.917  ████████████████████
         288  ". "                    0    0.083  █▉
context: "the cat "
model: weighted (quadratic)   effective n: 3   suffix count: 3   sparse: no
levels: ℓ=2 (3) ℓ=1 (4)
          id  token               count     prob
         517  "sat "                  1    0.367  ████████████████████
          59  "ran "                  1    0.317  █████████████████▎
         830  "and "                  1    0.317  █████████████████▎
context: "dog cat "
Stupid Backoff: λ = 0.4, τ = 1, ℓτ = 1 (scores are not probabilities)
  next                      score from ℓ      count normalized
  517 "sat "                  0.5       1          2     0.3723
  59 "ran "                  0.25       1          1     0.1862
  830 "and "                 0.25       1          1     0.1862
  3 "the "              0.0685714       0          6     0.0511
  (10 more)
model: ∞-gram
  token          prob  effective n
  802 "dog "   0.666667            2
  59 "ran "   0.500000            3
  316 "to "   1.000000            4
P = 0.333333   log2 P = -1.5850
model: 2-gram
  token          prob  effective n
  3 "the "   0.000000            2
  260 "cat "   0.500000            2
  517 "sat "   0.500000            2
P = 0   (log2 P = -inf: a factor is 0)
--- stderr
--- status 0

=== generation in tokens
load t4
generate --ids 3 --max 12 --seed 4
generate --ids 545 --max 6 --temperature 0 --seed 5
generate --ids 3,260 --max 5 --seed 1 --n 2 --top-k 1 --no-stop-at-end
generate --ids 3,260 --max 5 --seed 1 --weighted linear
generate --ids 3,260 --max 5 --seed 1 --interp 2
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
the cat and the cat ran . 
[6 tokens in 0.0 ms · ∞-gram · seed 4 · stop: end · median effective n 5 · longest verbatim span 6 tokens (doc 2, story-2.txt#1 token 4) · 0% of output inside corpus spans ≥ 20 tokens]
a dog ran to the park . 
[6 tokens in 0.0 ms · ∞-gram · seed 5 · stop: max · median effective n 5 · longest verbatim span 6 tokens (doc 1, story-1.txt#1 token 1) · 0% of output inside corpus spans ≥ 20 tokens]
the cat sat on the cat sat 
[5 tokens in 0.0 ms · 2-gram · seed 1 · stop: max · median effective n 2 · longest verbatim span 3 tokens (doc 0, story-0.txt#1 token 2) · 0% of output inside corpus spans ≥ 20 tokens]
the cat and the cat ran . 
[5 tokens in 0.0 ms · weighted (linear) · seed 1 · stop: max · median effective n 5 · longest verbatim span 5 tokens (doc 2, story-2.txt#1 token 5) · 0% of output inside corpus spans ≥ 20 tokens]
the cat and the cat ran . 
[5 tokens in 0.0 ms · interpolation, 2 levels · seed 1 · stop: max · median effective n 5 · longest verbatim span 5 tokens (doc 2, story-2.txt#1 token 5) · 0% of output inside corpus spans ≥ 20 tokens]
--- stderr
--- status 0

=== eval in tokens
$ sh printf '3 802 87 3 260\n830 3 260 59 288\n' > {TMP}/held.ids
load t4
eval {TMP}/held.ids
eval --ids 545,802,59,316,3,573 --n 2 --alpha 0.1
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
eval {TMP}/held.ids (10 tokens) · ∞-gram · context ≤ 100 tokens
  scored positions  9
  perplexity        1.22 (per token)
  bits per token    0.2872
  bits per byte     0.0760 (of 34 bytes of text)
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  88.9% (sparse: 100.0% of 8, non-sparse: 0.0% of 1)
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
eval --ids (6 tokens) · 2-gram, Laplace α=0.1 · context ≤ 100 tokens
  scored positions  5
  perplexity        68.84 (per token)
  bits per token    6.1053
  bits per byte     1.5263 (of 20 bytes of text)
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  80.0% (sparse: 100.0% of 3, non-sparse: 50.0% of 2)
  effective n
      1          0 
      2          5 ████████████████████████████████████████
--- stderr
--- status 0

=== spans in tokens
load t4
spans --ids 3,802,59,316,3,260,517,774,3,31 --min-len 2
spans --ids 545,802,87,3,31 --min-len 1 --max-count 1 --positions 1
generate --ids 545 --max 5 --seed 11
spans --last --min-len 3
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
3 spans of at least 2 tokens
   start length    count  text / sources
       0      2        1  "the dog "
                           doc 2 story-2.txt#1 token 0
       1      4        1  "dog ran to the "
                           doc 1 story-1.txt#1 token 1
       4      6        1  "the cat sat on the mat "
                           doc 0 story-0.txt#1 token 0
novelty: 0.0% of the 10 tokens are not inside a corpus span of 2 tokens or more
2 spans of at least 1 tokens (rare: at most 1 occurrence)
   start length    count  text / sources
       1      3        1  "dog saw the "
                           doc 2 story-2.txt#1 token 1
       3      2        1  "the mat "
                           doc 0 story-0.txt#1 token 4
novelty: 0.0% of the 5 tokens are not inside a corpus span of 1 tokens or more
a cat sat on a dog 
[5 tokens in 0.0 ms · ∞-gram · seed 11 · stop: max · median effective n 4 · longest verbatim span 5 tokens (doc 3, story-3.txt#1 token 1) · 0% of output inside corpus spans ≥ 20 tokens]
1 span of at least 3 tokens
   start length    count  text / sources
       0      5        1  "cat sat on a dog "
                           doc 3 story-3.txt#1 token 1
novelty: 0.0% of the 5 tokens are not inside a corpus span of 3 tokens or more
--- stderr
--- status 0

=== search in tokens
load t4
search "3,260" AND ("517" OR "59")
search "802" AND "260" --within 3
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
2 documents match
  doc 0  story-0.txt#1  2 hits, first at token 0
      the cat sat on the mat . 
  doc 2  story-2.txt#1  3 hits, first at token 3
      the dog saw the cat and the cat ran . 
1 document matches with all clauses within 3 tokens
  doc 2  story-2.txt#1  3 hits, first at token 1
      the dog saw the cat and the cat ran . 
--- stderr
--- status 0

=== explain in tokens
load t4
explain --ids 545,802,59 --top 2 --positions 1 --width 3
generate --ids 3 --max 4 --seed 4
explain --step 2 --top 1 --positions 1 --width 2
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
context: "a dog ran "
model: ∞-gram   effective n: 4   suffix count: 1   sparse: yes
n-gram profile (suffix length ℓ: occurrences, and how many continue with 316 "to ")
        ℓ      count   → next
          1          2          1  ████████████████████████
        2-3          1          1  ███████████████▏
candidates:
  316 "to " count 1        prob 1.0000
      story-1.txt#1 doc 1 token 0  a dog ran to the park . 
the cat and the cat 
[4 tokens in 0.0 ms · ∞-gram · seed 4 · stop: max · median effective n 4 · longest verbatim span 4 tokens (doc 2, story-2.txt#1 token 4) · 0% of output inside corpus spans ≥ 20 tokens]
context: "the cat "
model: ∞-gram   effective n: 3   suffix count: 3   sparse: no
step 2 chose 830 "and " with probability 0.3333
n-gram profile (suffix length ℓ: occurrences, and how many continue with 830 "and ")
        ℓ      count   → next
          1          4          1  ████████████████████████
          2          3          1  ████████████████████▋
candidates:
  59 "ran " count 1        prob 0.3333
      story-2.txt#1 doc 2 token 6  cat and the cat ran . 
--- stderr
--- status 0

=== mix in tokens
load t4
mix --ids 3 --llm [{"token_id":802,"logprob":-0.7},{"token_id":260,"logprob":-1.2},{"token_id":87,"logprob":-2}] --lambda 0.5
mix --ids 3 --llm [{"token":"cat","logprob":-1}]
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
context: "the "
λ (corpus weight) = 0.500 (fixed)   effective n: 2   sparse: no
  token              llm p  corpus p   mixed p  rank
  260 "cat "        0.3012    0.5000    0.5008  2→1
  802 "dog "        0.4966    0.1667    0.4146  1→2
  87 "saw "         0.1353    0.0000    0.0846  3→3
--- stderr
error: line 3: --llm[0]: a token dataset's candidates need "token_id", an id below 65535
  mix --ids 3 --llm [{"token":"cat","logprob":-1}]
              ^
--- status 1

=== documents through the vocabulary, or as ids
load t4
doc 2
doc story-1.txt --range 1:4
load t6
doc 3
count --ids 3,260 --positions 3
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
doc 2 · story-2.txt#1 · 10 tokens
metadata {"path": "story-2.txt", "linenum": 0, "metadata": {}}
     1  the dog saw the cat and the cat ran . 
doc 1 · story-1.txt#1 · 7 tokens
metadata {"path": "story-1.txt", "linenum": 0, "metadata": {}}
     1  dog ran to 
loaded t6: 70 B, 4 docs, 2 shards
doc 3 · story-3.txt#1 · 7 tokens
metadata {"path": "story-3.txt", "linenum": 0, "metadata": {}}
     1  [545][260][517][774][545][802][288]
3
  story-0.txt#1 doc 0 token 0  [3][260][517][774][3][31][288]
  story-2.txt#1 doc 2 token 3  [3][802][87][3][260][830][3][260][59][288]
  story-2.txt#1 doc 2 token 6  [3][802][87][3][260][830][3][260][59][288]
--- stderr
--- status 0

=== JSON keys of token datasets
$ args -d t4 --json
count --ids 260 --positions 1
predict --ids 802 --top 2
doc 0
--- stdout
{"command":"count","dataset":"t4","query_ids":[260],"query":"cat ","count":4,"positions":[{"doc":0,"name":"story-0.txt","token_offset":1,"length":1,"snippet":"the cat sat on the mat . ","hl0":4,"hl1":8}],"elapsed_ms":0}
{"command":"predict","dataset":"t4","model":"∞-gram","context_ids":[802],"context":"dog ","effective_n":2,"longest_match":1,"suffix_count":3,"sparse":false,"defined":true,"candidates":[{"token_id":59,"token":"ran ","count":1,"prob":0.33333333333333331},{"token_id":87,"token":"saw ","count":1,"prob":0.33333333333333331}],"elapsed_ms":0}
{"command":"doc","doc":0,"name":"story-0.txt","source_line":1,"tokens":7,"metadata":"{\"path\": \"story-0.txt\", \"linenum\": 0, \"metadata\": {}}","first_line":1,"offset":0,"text":"the cat sat on the mat . ","elapsed_ms":0}
--- stderr
--- status 0

=== what token datasets refuse
load t4
count "the cat"
count --ids 3,65535,260
count --ids 3,x
count --ids 70000
spans --min-len 2 "the cat"
search "the"
search "3,65535"
contam {DATA}/tokens-vocab.json
dups --min-len 2
build t4
:dataset compose both t4 t6
--- stdout
loaded t4: 70 B, 4 docs, 1 shard
--- stderr
error: line 2: this is a token dataset without a tokenizer: give token ids with --ids
error: line 3: --ids: item 2 is the document separator 65535, which may only come last (no pattern spans two documents)
  count --ids 3,65535,260
              ^
Use ":help count" for usage.
error: line 4: --ids: item 2 ("x") is not a token id (give ids as 5613,4086,9068)
  count --ids 3,x
              ^
Use ":help count" for usage.
error: line 5: --ids: item 1 ("70000") is larger than a token id of this dataset can be: its ids are stored in 2 bytes, up to 65535, the document separator
  count --ids 70000
              ^
Use ":help count" for usage.
error: line 6: this is a token dataset without a tokenizer: give token ids with --ids
error: line 7: clause 1, term 1: item 1 ("the") is not a token id (give ids as 5613,4086,9068)
  search "the"
         ^
Use ":help search" for usage.
error: line 8: clause 1, term 1: a term may not hold the separator (search finds terms inside documents)
  search "3,65535"
         ^
Use ":help search" for usage.
error: line 9: contam does not run on token datasets yet (every other query command does)
error: line 10: dups does not run on token datasets yet (every other query command does)
error: line 11: t4 is attached read-only from {DATA}/tokens-v4: there is nothing to build (attach it again after that index changes)
error: line 12: t4 is a token index attached read-only: compositions are of datasets built here
--- status 1

=== what attach refuses
:dataset attach v5 {DATA}/v5_tokens --format infini-gram
:dataset attach wide {DATA}/tokens-v4 --format infini-gram --dtype u32
:dataset attach none {DATA}/tree --format infini-gram
:dataset attach fmt {DATA}/tokens-v4 --format jsonl
:dataset attach nofmt {DATA}/tokens-v4
:dataset add x {DATA}/animals.txt --dtype u16
--- stdout
--- stderr
error: line 1: {DATA}/v5_tokens: an infini-gram v5 index stores every document reversed, which this engine does not read: attach a v4 or v6 index of the same data
error: line 2: {DATA}/tokens-v4/tokenized.0 (70 bytes) and {DATA}/tokens-v4/table.0 (35 bytes) do not fit a token width of 4 bytes (a whole number of tokens, a separator first, 1 to 5 pointer bytes per token)
error: line 3: {DATA}/tree: no infini-gram index here (expected tokenized.0, table.0 and offset.0, or tokenized, table and offset in it or in one directory per shard)
error: line 4: --format: attach reads infini-gram indexes
  :dataset attach fmt {DATA}/tokens-v4 --format jsonl
                                                ^
Use ":help :dataset" for usage.
error: line 5: attach needs --format infini-gram (the layout of the index directory)
error: line 6: --dtype applies to --format ids (and :dataset attach)
  :dataset add x {DATA}/animals.txt --dtype u16
                                    ^
Use ":help :dataset" for usage.
--- status 1

=== next-token tables
# prepare computes the next tokens of every context of one, two or three tokens seen
# --min-count times or more, once; the answers are the same with the table as without it
:dataset info t6
:dataset prepare t4 --min-count 2
:dataset prepare t6
:dataset info t4
load t4
predict --ids 3
predict --ids 260 --top 3
predict --ids 3,260
predict --ids 260,517,774
prob --ids 3 --next-ids 260
load t6
predict --ids 3
--- stdout
name        t6
status      built
attached    {DATA}/tokens-v6 (infini-gram, read-only)
tokens      u16 ids (35 tokens)
bytes       70 B (70 bytes)
documents   4
shards      2
vocabulary  - (ids shown as numbers)
created     (time)
next tokens - (no table: :dataset prepare t6 makes one)
prepared t4: next tokens of 13 contexts seen 2+ times, 28 entries, 2.0 kB (used from the next load)
prepared t6: next tokens of 13 contexts seen 2+ times, 28 entries, 2.2 kB (used from the next load)
name        t4
status      built
attached    {DATA}/tokens-v4 (infini-gram, read-only)
tokens      u16 ids (35 tokens)
bytes       70 B (70 bytes)
documents   4
shards      1
vocabulary  {DATA}/tokens-vocab.json
created     (time)
next tokens 13 contexts seen 2+ times, 28 entries, 2.0 kB
loaded t4: 70 B, 4 docs, 1 shard
context: "the "
model: ∞-gram   effective n: 2   suffix count: 6   sparse: no
          id  token               count     prob
         260  "cat "                  3    0.500  ████████████████████
          31  "mat "                  1    0.167  ██████▋
         573  "park "                 1    0.167  ██████▋
         802  "dog "                  1    0.167  ██████▋
context: "cat "
model: ∞-gram   effective n: 2   suffix count: 4   sparse: no
          id  token               count     prob
         517  "sat "                  2    0.500  ████████████████████
          59  "ran "                  1    0.250  ██████████
         830  "and "                  1    0.250  ██████████
context: "the cat "
model: ∞-gram   effective n: 3   suffix count: 3   sparse: no
          id  token               count     prob
          59  "ran "                  1    0.333  ████████████████████
         517  "sat "                  1    0.333  ████████████████████
         830  "and "                  1    0.333  ████████████████████
context: "cat sat on "
model: ∞-gram   effective n: 4   suffix count: 2   sparse: no
          id  token               count     prob
           3  "the "                  1    0.500  ████████████████████
         545  "a "                    1    0.500  ████████████████████
model: ∞-gram
  token          prob  effective n
  260 "cat "   0.500000            2
P = 0.5   log2 P = -1.0000
loaded t6: 70 B, 4 docs, 2 shards
context: "[3]"
model: ∞-gram   effective n: 2   suffix count: 6   sparse: no
          id  token               count     prob
         260  "[260]"                 3    0.500  ████████████████████
          31  "[31]"                  1    0.167  ██████▋
         573  "[573]"                 1    0.167  ██████▋
         802  "[802]"                 1    0.167  ██████▋
--- stderr
--- status 0

=== what prepare refuses
:dataset prepare nosuch
:dataset prepare t4 --min-count 0
:dataset prepare t4 --vocab {DATA}/tokens-vocab.json
:dataset info t4 --min-count 2
:dataset add bytes {DATA}/animals.txt
:dataset prepare bytes
:dataset prepare
--- stdout
added bytes: 1 source (run: build bytes)
--- stderr
error: line 1: unknown dataset "nosuch"
error: line 2: --min-count: expected a whole number from 1 to 18446744073709551615
  :dataset prepare t4 --min-count 0
                                  ^
Use ":help :dataset" for usage.
error: line 3: option --vocab does not apply to :dataset prepare
  :dataset prepare t4 --vocab {DATA}/tokens-vocab.json
                      ^
Use ":help :dataset" for usage.
error: line 4: option --min-count applies to :dataset prepare only
  :dataset info t4 --min-count 2
                   ^
Use ":help :dataset" for usage.
error: line 6: bytes is not an attached token dataset: next-token tables are made for those (:dataset attach)
error: line 7: missing argument; usage: :dataset prepare NAME [--min-count N]
--- status 1
