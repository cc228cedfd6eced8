# predict, prob, backoff, eval: every model option, JSON, and bad input.

=== set up the published train split (the first 90% of Tiny Shakespeare) and a small corpus
:dataset add shakes-train {DATASETS}/tinyshakespeare.txt --range 0:90%
build shakes-train
:dataset add animals {DATA}/animals.txt
build animals
:dataset add u8 {DATA}/utf8.txt --text "caf\xc3\xa9 caf\xc3\xa9s cafe"
build u8
--- stdout
added shakes-train: 1 source (run: build shakes-train)
built shakes-train: 1.0 MB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added animals: 1 source (run: build animals)
built animals: 66 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
added u8: 2 sources (run: build u8)
built u8: 41 B, 2 docs, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== predict: ∞-gram, n-gram, top, bytes, max-context
$ args -d shakes-train
predict "What say"
predict --n 3 "the"
predict --n 40 "the"
predict --top 3 --max-context 2 "What say"
predict --bytes --top 3 "KING RICHARD"
--- stdout
context: "What say"
model: ∞-gram   effective n: 9   suffix count: 20   sparse: no
  next          count     prob
  's'               8    0.400  ████████████████████
  ' '               7    0.350  █████████████████▌
  '''               3    0.150  ███████▌
  'e'               2    0.100  █████
context: "the"
model: 3-gram   effective n: 3   suffix count: 16418   sparse: no
  next          count     prob
  ' '            7012    0.427  ████████████████████
  'r'            3661    0.223  ██████████▌
  'n'            1114    0.068  ███▏
  'a'            1073    0.065  ███
  'e'             807    0.049  ██▎
  'i'             523    0.032  █▌
  'm'             513    0.031  █▌
  'y'             497    0.030  █▍
  's'             380    0.023  █▏
  'l'             188    0.011  ▌
  (20 more)
context: "the"
model: 40-gram   effective n: 40   suffix count: 0   sparse: no
no estimate: the 39-byte context never occurs (or the text is shorter)
context: "What say"
model: ∞-gram   effective n: 3   suffix count: 2301   sparse: no
  next          count     prob
  ' '            1136    0.494  ████████████████████
  ','             428    0.186  ███████▌
  's'             164    0.071  ██▉
  (18 more)
context: "KING RICHARD"
model: ∞-gram   effective n: 13   suffix count: 236   sparse: yes
  next          count     prob
  ' '             236    1.000  ████████████████████
--- stderr
--- status 0

=== predict: weighted, interpolation, SBI, Laplace
$ args -d shakes-train
predict --weighted quadratic --top 3 "KING RICHARD"
predict --weighted exponential --min-len 2 --max-len 4 --top 3 "What say"
predict --weighted linear --min-len 50 --top 2 "What"
predict --interp 3 --top 4 "What say"
predict --interp -1 --sbi --top 3 "the kin"
predict --alpha 1 --top 3 "zzzqqq"
--- stdout
context: "KING RICHARD"
model: weighted (quadratic)   effective n: 13   suffix count: 236   sparse: no
levels: ℓ=12 (236) ℓ=7 (278) ℓ=3 (465) ℓ=2 (588) ℓ=1 (1941)
  next          count     prob
  ' '             236    0.964  ████████████████████
  ':'               0    0.034  ▊
  'I'               0  7.2e-04  
  (14 more)
context: "What say"
model: weighted (exponential)   effective n: 5   suffix count: 402   sparse: no
levels: ℓ=4 (402) ℓ=3 (417) ℓ=2 (2301)
  next          count     prob
  ' '             203    0.503  ████████████████████
  ','              73    0.183  ███████▎
  's'              41    0.097  ███▉
  (18 more)
context: "What"
model: weighted (linear)   effective n: 5   suffix count: 496   sparse: no
(no suffix length in [min-len, max-len]: showing the ∞-gram)
  next          count     prob
  ' '             338    0.681  ████████████████████
  ','              93    0.188  █████▌
  (5 more)
context: "What say"
model: interpolation, 3 levels   effective n: 9   suffix count: 20   sparse: no
levels: ℓ=8 (20) ℓ=7 (34) ℓ=5 (60)
  next          count     prob
  's'               8    0.398  ████████████████████
  ' '               7    0.352  █████████████████▊
  '''               3    0.148  ███████▍
  'e'               2    0.092  ████▋
  (4 more)
context: "the kin"
model: interpolation, all levels (SBI)   effective n: 8   suffix count: 152   sparse: no
levels: ℓ=7 (152) ℓ=6 (173) ℓ=5 (203) ℓ=4 (560) ℓ=3 (771) ℓ=2 (9531) ℓ=1 (43817)
  next          count     prob
  'g'             148    0.972  ████████████████████
  'd'               3    0.021  ▍
  's'               1    0.007  ▏
  (32 more)
context: "zzzqqq"
model: ∞-gram, Laplace α=1   effective n: 2   suffix count: 563   sparse: no
  next          count     prob
  'u'             563    0.759  ████████████████████
  unseen symbols (smoothing): 0.241
--- stderr
--- status 0

=== predict: characters, end of document, contexts never seen
$ args -d u8
predict "caf"
predict --bytes "caf"
predict "caf\xc3"
predict "dog."
predict "\x01\x02"
--- stdout
context: "caf"
model: ∞-gram   effective n: 4   suffix count: 3   sparse: no
  next          count     prob
  'é'               2    0.667  ████████████████████
  'e'               1    0.333  ██████████
context: "caf"
model: ∞-gram   effective n: 4   suffix count: 3   sparse: no
  next          count     prob
  \xc3              2    0.667  ████████████████████
  'e'               1    0.333  ██████████
context: "caf\xc3"
model: ∞-gram   effective n: 5   suffix count: 2   sparse: yes
  next          count     prob
  \xa9              2    1.000  ████████████████████
context: "dog."
model: ∞-gram   effective n: 1   suffix count: 41   sparse: no
  next          count     prob
  ' '               5    0.122  ████████████████████
  'a'               3    0.073  ████████████
  'c'               3    0.073  ████████████
  'f'               3    0.073  ████████████
  'l'               3    0.073  ████████████
  \xa9              3    0.073  ████████████
  'é'               3    0.073  ████████████
  '0'               2    0.049  ████████
  <end>             2    0.049  ████████
  \n                1    0.024  ████
  (13 more)
context: "\x01\x02"
model: ∞-gram   effective n: 1   suffix count: 41   sparse: no
  next          count     prob
  ' '               5    0.122  ████████████████████
  'a'               3    0.073  ████████████
  'c'               3    0.073  ████████████
  'f'               3    0.073  ████████████
  'l'               3    0.073  ████████████
  \xa9              3    0.073  ████████████
  'é'               3    0.073  ████████████
  '0'               2    0.049  ████████
  <end>             2    0.049  ████████
  \n                1    0.024  ████
  (13 more)
--- stderr
--- status 0

=== predict and prob in JSON
$ args -d animals --json
predict --top 2 "the "
prob "the " "cat"
prob --bytes "the " "zz"
backoff --top 3 "sat on the "
--- stdout
{"command":"predict","dataset":"animals","model":"∞-gram","effective_n":5,"longest_match":4,"suffix_count":4,"sparse":false,"defined":true,"candidates":[{"symbol":"c","bytes_hex":"63","count":1,"prob":0.25},{"symbol":"d","bytes_hex":"64","count":1,"prob":0.25}],"elapsed_ms":0}
{"command":"prob","dataset":"animals","prob":0.25,"log2_prob":-2,"factors":[{"symbol":"c","bytes_hex":"63","prob":0.25,"effective_n":5},{"symbol":"a","bytes_hex":"61","prob":1,"effective_n":6},{"symbol":"t","bytes_hex":"74","prob":1,"effective_n":7}],"elapsed_ms":0}
{"command":"prob","dataset":"animals","prob":0,"log2_prob":null,"factors":[{"symbol":"z","bytes_hex":"7a","prob":0,"effective_n":5},{"symbol":"z","bytes_hex":"7a","prob":0,"effective_n":1}],"elapsed_ms":0}
{"command":"backoff","dataset":"animals","longest":11,"factor":0.4,"threshold":1,"candidates":[{"symbol":"l","bytes_hex":"6c","score":0.5,"length":11,"count":1,"normalized":0.4995494081071829},{"symbol":"m","bytes_hex":"6d","score":0.5,"length":11,"count":1,"normalized":0.4995494081071829},{"symbol":"c","bytes_hex":"63","score":0.00040960000000000014,"length":4,"count":1,"normalized":0.00040923087512140439}],"elapsed_ms":0}
--- stderr
--- status 0

=== prob: chain rule with factors
$ args -d shakes-train
prob "wherefore art " "thou"
prob --interp 2 "wherefore art " "thee"
prob "xyz" "\x01"
--- stdout
model: ∞-gram
  symbol         prob  effective n
  't'        1.000000           15
  'h'        1.000000           16
  'o'        1.000000           17
  'u'        1.000000           18
P = 1   log2 P = 0.0000
model: interpolation, 2 levels
  symbol         prob  effective n
  't'        0.944444           15
  'h'        1.000000           16
  'e'        0.000000           17
  'e'        0.000000            9
P = 0   (log2 P = -inf: a factor is 0)
model: ∞-gram
  symbol         prob  effective n
  \x01       0.000000            2
P = 0   (log2 P = -inf: a factor is 0)
--- stderr
--- status 0

=== backoff: factor and threshold
$ args -d shakes-train
backoff --top 5 "O Romeo, Romeo! wherefore"
backoff --factor 0.7 --threshold 100 --top 3 "O Romeo, Romeo! wherefore"
--- stdout
context: "O Romeo, Romeo! wherefore"
Stupid Backoff: λ = 0.4, τ = 1, ℓτ = 25 (scores are not probabilities)
  next            score from ℓ      count normalized
  ' '                 1      25          1     1.0000
  '?'       1.43166e-07      10          2     0.0000
  ','       7.15828e-08      10          1     0.0000
  ':'       2.68435e-08       9          1     0.0000
  \n        2.09511e-09       8          2     0.0000
  (61 more)
context: "O Romeo, Romeo! wherefore"
Stupid Backoff: λ = 0.7, τ = 100, ℓτ = 8 (scores are not probabilities)
  next            score from ℓ      count normalized
  ' '          0.640244       8        105     0.6068
  ','          0.292683       8         48     0.2774
  '?'         0.0304878       8          5     0.0289
  (63 more)
--- stderr
--- status 0

=== eval reproduces the published table (validation, K = 2), with the floor reported
$ args -d shakes-train
eval --sbi --interp 2 --threads 2 {DATASETS}/tinyshakespeare.txt --range 90%:
--- stdout
eval {DATASETS}/tinyshakespeare.txt (111540 bytes) · interpolation, 2 levels (SBI) · context ≤ 100 bytes
  scored positions  111539
  perplexity        97.73
  bits per byte     6.6108
  zero probability  17990 positions (16.13%), each counted at the floor P = 1e-10
                    the floor, not the model, dominates these figures
  ∞-gram agreement  47.3% (sparse: 63.5% of 67682, non-sparse: 22.2% of 43857)
  effective n
      1          0 
      2        188 ▌
      3       1367 ███▎
      4       3136 ███████▋
      5       6597 ███████████████▉
      6      11916 ████████████████████████████▊
      7      15614 █████████████████████████████████████▋
      8      16576 ████████████████████████████████████████
      9      15567 █████████████████████████████████████▋
     10      12600 ██████████████████████████████▍
     11       9360 ██████████████████████▋
     12       6646 ████████████████
     13       4427 ██████████▋
     14       2799 ██████▊
     15       1882 ████▌
     16       1183 ██▉
     17        674 █▋
     18        400 █
     19        219 ▌
     20        144 ▍
     21         83 ▎
     22         57 ▏
     23         38 ▏
     24         18 
     25         13 
     26         10 
     27          5 
     28          5 
     29          5 
     30          5 
     31          3 
     32          2 
--- stderr
--- status 0

=== eval in JSON: the ten published perplexities
$ args -d shakes-train
$ sh true
:format json
eval --sbi --interp 1 --threads 2 {DATASETS}/tinyshakespeare.txt --range 90%:
--- stdout
{"command":":format","key":"format","value":"json","elapsed_ms":0}
{"command":"eval","dataset":"shakes-train","model":"interpolation, 1 level (SBI)","source":"{DATASETS}/tinyshakespeare.txt","bytes":111540,"max_context":100,"perplexity":4036.1917543668756,"bits_per_byte":11.978779001351793,"scored":111539,"zero_prob":38785,"zero_prob_share":0.34772590753010157,"floor_prob":1e-10,"agreement":0.47286599306072313,"agreement_sparse":0.63510239059129459,"agreement_dense":0.22249583874866041,"sparse_positions":67682,"effective_n_hist":{"2":188,"3":1367,"4":3136,"5":6597,"6":11916,"7":15614,"8":16576,"9":15567,"10":12600,"11":9360,"12":6646,"13":4427,"14":2799,"15":1882,"16":1183,"17":674,"18":400,"19":219,"20":144,"21":83,"22":57,"23":38,"24":18,"25":13,"26":10,"27":5,"28":5,"29":5,"30":5,"31":3,"32":2},"cancelled":false,"elapsed_ms":0}
--- stderr
--- status 0

=== eval of inline text and of the pure ∞-gram
$ args -d animals
eval --text "the cat sat on the log."
eval --max-context 3 --text "the dog sat on the mat."
eval --n 2 --text "a cat"
--- stdout
eval --text (23 bytes) · ∞-gram · context ≤ 100 bytes
  scored positions  22
  perplexity        3.15
  bits per byte     1.6541
  zero probability  1 positions (4.55%), each counted at the floor P = 1e-10
                    the floor, not the model, dominates these figures
                    (pure ∞-gram perplexity is infinite on this text)
  ∞-gram agreement  86.4% (sparse: 95.0% of 20, non-sparse: 0.0% of 2)
  effective n
      1          0 
      2          1 ████████████████████
      3          1 ████████████████████
      4          1 ████████████████████
      5          1 ████████████████████
      6          1 ████████████████████
      7          1 ████████████████████
      8          1 ████████████████████
      9          1 ████████████████████
     10          1 ████████████████████
     11          1 ████████████████████
     12          1 ████████████████████
     13          1 ████████████████████
     14          2 ████████████████████████████████████████
     15          2 ████████████████████████████████████████
     16          2 ████████████████████████████████████████
     17          1 ████████████████████
     18          1 ████████████████████
     19          1 ████████████████████
     20          1 ████████████████████
eval --text (23 bytes) · ∞-gram · context ≤ 3 bytes
  scored positions  22
  perplexity        1.25
  bits per byte     0.3259
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  77.3% (sparse: 100.0% of 17, non-sparse: 0.0% of 5)
  effective n
      1          0 
      2          1 ██
      3          1 ██
      4         20 ████████████████████████████████████████
eval --text (5 bytes) · 2-gram · context ≤ 100 bytes
  scored positions  4
  perplexity        2.88
  bits per byte     1.5250
  zero probability  0 positions (0.00%), each counted at the floor P = 1e-10
  ∞-gram agreement  50.0% (sparse: 66.7% of 3, non-sparse: 0.0% of 1)
  effective n
      1          0 
      2          1 ████████████████████
      3          2 ████████████████████████████████████████
      4          1 ████████████████████
--- stderr
--- status 0

=== bad input
$ args -d animals
predict
predict --interp 0 "x"
predict --interp -2 "x"
predict --alpha -1 "x"
predict --n 0 "x"
predict --weighted cubic "x"
predict --n 2 --interp 2 "x"
predict --sbi "x"
predict --min-len 2 "x"
predict --frobnicate "x"
prob "only one"
prob "a" ""
eval {DATA}/does-not-exist.txt
eval {DATA}/invalid.txt
eval --text "a"
eval --range 5:2 {DATA}/animals.txt
backoff --factor 2 "x"
predict --beta 3 "x"
predict --weighted linear --beta 3 "x"
--- stdout
--- stderr
error: line 1: missing TEXT; usage: predict [MODEL OPTIONS] [--top K] [--bytes] TEXT | --ids A,B,C
error: line 2: --interp: K must be >= 1, or -1 for all levels
  predict --interp 0 "x"
                   ^
Use ":help predict" for usage.
error: line 3: --interp: -2 is out of range (-1 to 1000000)
  predict --interp -2 "x"
                   ^
Use ":help predict" for usage.
error: line 4: --alpha: -1 is out of range (0 to 1e+12)
  predict --alpha -1 "x"
                  ^
Use ":help predict" for usage.
error: line 5: --n: 0 is out of range (1 to 1000000)
  predict --n 0 "x"
              ^
Use ":help predict" for usage.
error: line 6: --weighted: expected linear, quadratic, exponential or sigmoid
  predict --weighted cubic "x"
                     ^
Use ":help predict" for usage.
error: line 7: choose one model: --n cannot be combined with another model option
  predict --n 2 --interp 2 "x"
          ^
Use ":help predict" for usage.
error: line 8: --sbi applies only with --interp (selective back-off)
  predict --sbi "x"
          ^
Use ":help predict" for usage.
error: line 9: --min-len and --max-len apply only with --weighted
  predict --min-len 2 "x"
          ^
Use ":help predict" for usage.
error: line 10: unknown option --frobnicate for predict
  predict --frobnicate "x"
          ^
Use ":help predict" for usage.
error: line 11: prob needs two quoted texts; usage: prob [MODEL OPTIONS] "TEXT" "CONTINUATION"
error: line 12: empty continuation
  prob "a" ""
           ^
Use ":help prob" for usage.
error: line 13: {DATA}/does-not-exist.txt: cannot read: No such file or directory
error: line 14: {DATA}/invalid.txt: invalid UTF-8 at byte offset 10
error: line 15: nothing to score: the text needs at least 2 bytes
error: line 16: bad range "5:2": start is after end
error: line 17: --factor: 2 is out of range (1e-09 to 1)
  backoff --factor 2 "x"
                   ^
Use ":help backoff" for usage.
error: line 18: --beta applies only with --weighted exponential
  predict --beta 3 "x"
          ^
Use ":help predict" for usage.
error: line 19: --beta applies only with --weighted exponential
  predict --weighted linear --beta 3 "x"
                            ^
Use ":help predict" for usage.
--- status 1

=== no dataset loaded
predict "x"
prob "a" "b"
backoff "x"
eval --text "abc"
--- stdout
--- stderr
error: line 1: no dataset loaded (use: load NAME)
error: line 2: no dataset loaded (use: load NAME)
error: line 3: no dataset loaded (use: load NAME)
error: line 4: no dataset loaded (use: load NAME)
--- status 1
