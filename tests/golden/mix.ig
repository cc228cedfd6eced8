# mix: the three accepted LLM file shapes, every λ mode, JSON, and bad input.

=== set up
:dataset add shakespeare {DATASETS}/tinyshakespeare.txt
build shakespeare
--- stdout
added shakespeare: 1 source (run: build shakespeare)
built shakespeare: 1.1 MB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
--- stderr
--- status 0

=== a list of tokens with a fixed λ, sparse/dense and adaptive
$ args -d shakespeare
mix "O Romeo, wherefore art thou" --llm {DATA}/llm-list.json --lambda 0.3
mix "But soft, what light" --llm {DATA}/llm-list.json --lambda-sparse 0.8 --lambda-dense 0.2
mix "good" --llm {DATA}/llm-list.json --adaptive --alpha 0.1 --top 3
--- stdout
context: "O Romeo, wherefore art thou"
λ (corpus weight) = 0.300 (fixed)   effective n: 20   sparse: yes
  token              llm p  corpus p   mixed p  rank
  " Rome"           0.3329    1.0000    0.4668  1→1
  " Romeo"          0.0408    1.0000    0.2877  4→2
  "?"               0.3000    0.0000    0.1839  2→3
  " Juliet"         0.0821    0.0000    0.0503  3→4
  \x20\xe2          0.0183    0.0000    0.0112  5→5
context: "But soft, what light"
λ (corpus weight) = 0.800 (sparse/dense)   effective n: 12   sparse: yes
  token              llm p  corpus p   mixed p  rank
  " Rome"           0.3329    0.0000    0.4300  1→1
  "?"               0.3000    0.0000    0.3876  2→2
  " Juliet"         0.0821    0.0000    0.1060  3→3
  " Romeo"          0.0408    0.0000    0.0527  4→4
  \x20\xe2          0.0183    0.0000    0.0237  5→5
context: "good"
λ (corpus weight) = 0.399 (adaptive)   effective n: 5   sparse: no
  token              llm p  corpus p   mixed p  rank
  " Rome"           0.3329    0.0000    0.4271  1→1
  "?"               0.3000    0.0080    0.3917  2→2
  " Juliet"         0.0821    0.0000    0.1053  3→3
  (2 more)
--- stderr
--- status 0

=== OpenAI chat top_logprobs (bytes arrays, partial UTF-8) and the legacy map, in JSON
$ args -d shakespeare --json
mix "Wherefore art thou" --llm {DATA}/llm-chat.json --lambda 0.5
mix "Wherefore art thou" --llm {DATA}/llm-legacy.json --lambda 0.5
mix "Wherefore art thou" --llm {DATA}/llm-legacy.json --lambda 0.5 --top 1
--- stdout
{"command":"mix","dataset":"shakespeare","effective_n":18,"sparse":true,"lambda":0.5,"lambda_mode":"fixed","tokens":[{"token":" Romeo","bytes_hex":"20526f6d656f","llm_prob":0.40656965974059911,"corpus_prob":1,"mixed_prob":0.53437470947753518,"mixed_unnormalized":0.70328482987029961,"rank_before":1,"rank_after":1,"effective_n":18},{"token":" R","bytes_hex":"2052","llm_prob":0.22313016014842982,"corpus_prob":1,"mixed_prob":0.4646835792711948,"mixed_unnormalized":0.611565080074215,"rank_before":2,"rank_after":2,"effective_n":18},{"token":null,"bytes_hex":"e280","llm_prob":0.0024787521766663585,"corpus_prob":0,"mixed_prob":0.00094171125127011064,"mixed_unnormalized":0.001239376088333179,"rank_before":3,"rank_after":3,"effective_n":18}],"elapsed_ms":0}
{"command":"mix","dataset":"shakespeare","effective_n":18,"sparse":true,"lambda":0.5,"lambda_mode":"fixed","tokens":[{"token":" Romeo","bytes_hex":"20526f6d656f","llm_prob":0.49658530379140953,"corpus_prob":1,"mixed_prob":0.77418335662831317,"mixed_unnormalized":0.74829265189570482,"rank_before":1,"rank_after":1,"effective_n":18},{"token":" sir","bytes_hex":"20736972","llm_prob":0.30119421191220214,"corpus_prob":0,"mixed_prob":0.15580772134035875,"mixed_unnormalized":0.15059710595610107,"rank_before":2,"rank_after":2,"effective_n":18},{"token":",","bytes_hex":"2c","llm_prob":0.1353352832366127,"corpus_prob":0,"mixed_prob":0.0700089220313281,"mixed_unnormalized":0.067667641618306337,"rank_before":3,"rank_after":3,"effective_n":18}],"elapsed_ms":0}
{"command":"mix","dataset":"shakespeare","effective_n":18,"sparse":true,"lambda":0.5,"lambda_mode":"fixed","tokens":[{"token":" Romeo","bytes_hex":"20526f6d656f","llm_prob":0.49658530379140953,"corpus_prob":1,"mixed_prob":0.77418335662831317,"mixed_unnormalized":0.74829265189570482,"rank_before":1,"rank_after":1,"effective_n":18}],"elapsed_ms":0}
--- stderr
--- status 0

=== bad input
$ args -d shakespeare
mix "x"
mix --llm {DATA}/llm-list.json
mix "x" --llm {DATA}/nothere.json
mix "x" --llm {DATA}/llm-bad.json
mix "x" --llm {DATA}/llm-broken.json
mix "x" --llm {DATA}/llm-list.json --lambda 2
mix "x" --llm {DATA}/llm-list.json --lambda 0.2 --adaptive
--- stdout
--- stderr
error: line 1: usage: mix CONTEXT|--ids A,B,C --llm FILE [--lambda L | --lambda-sparse A --lambda-dense B | --adaptive] [--alpha A] [--top K]
error: line 2: missing CONTEXT; usage: mix CONTEXT|--ids A,B,C --llm FILE [--lambda L | --lambda-sparse A --lambda-dense B | --adaptive] [--alpha A] [--top K]
error: line 3: {DATA}/nothere.json: cannot open: No such file or directory
  mix "x" --llm {DATA}/nothere.json
                ^
error: line 4: {DATA}/llm-bad.json: [0]: needs "logprob" (a number <= 0) or "prob" (0..1)
  mix "x" --llm {DATA}/llm-bad.json
                ^
error: line 5: {DATA}/llm-broken.json: not valid JSON: ']' expected near end of file (byte 28)
  mix "x" --llm {DATA}/llm-broken.json
                ^
error: line 6: --lambda: 2 is out of range (0 to 1)
  mix "x" --llm {DATA}/llm-list.json --lambda 2
                                              ^
Use ":help mix" for usage.
error: line 7: choose one of --lambda, --lambda-sparse/--lambda-dense, --adaptive
  mix "x" --llm {DATA}/llm-list.json --lambda 0.2 --adaptive
                                     ^
Use ":help mix" for usage.
--- status 1
