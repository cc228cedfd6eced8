# The first-session story: register, build, load, count, positions, JSON.

=== add, build, load
:dataset add animals {DATA}/animals.txt
build animals
load animals
--- stdout
added animals: 1 source (run: build animals)
built animals: 66 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded animals: 66 B, 1 doc, 1 shard
--- stderr
--- status 0

=== count forms
$ args -d animals
count "the"
count the cat
count "sat on the"
count ""
count "zebra"
count "\x41 cat"
count "the" "cat"
--- stdout
4
1
2
66
0
1
--- stderr
error: line 7: TEXT is one quoted text or plain words, not both: quote the whole text
  count "the" "cat"
              ^
Use ":help count" for usage.
--- status 1

=== positions in corpus order with snippets
$ args -d animals
count --positions 2 --width 6 "sat"
count --positions 10 "dog"
count "cat" --positions 1 --width 0
--- stdout
2
  …/data/animals.txt:1:9 @8  …e cat sat on th…
  …/data/animals.txt:2:9 @32  …e dog sat on th…
2
  …/data/animals.txt:2:5 @28  …t sat on the mat.↵the dog sat on the log.↵A cat…
  …/data/animals.txt:3:13 @60  … the log.↵A cat and a dog.↵
2
  …/data/animals.txt:1:5 @4  …cat…
  (1 more)
--- stderr
--- status 0

=== json output
$ args --json -d animals
count --positions 1 "mat"
count "absent"
count "\xff"
--- stdout
{"command":"count","dataset":"animals","query":"mat","count":1,"positions":[{"doc":0,"name":"{DATA}/animals.txt","offset":19,"line":1,"column":20,"length":3,"snippet":"the cat sat on the mat.↵the dog sat on the log.↵A ca…","hl0":19,"hl1":22}],"elapsed_ms":0}
{"command":"count","dataset":"animals","query":"absent","count":0,"elapsed_ms":0}
{"command":"count","dataset":"animals","query_hex":"ff","count":0,"elapsed_ms":0}
--- stderr
--- status 0

=== the bundled dataset answers as documented
:dataset add shakespeare {DATASETS}/tinyshakespeare.txt
build shakespeare
load shakespeare
count "wherefore art thou"
count --positions 3 "wherefore art thou"
count "ROMEO:"
--- stdout
added shakespeare: 1 source (run: build shakespeare)
built shakespeare: 1.1 MB, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded shakespeare: 1.1 MB, 1 doc, 1 shard
1
1
  …/tinyshakespeare.txt:16909:17 @478155  …, Romeo! wherefore art thou Romeo?↵D…
163
--- stderr
--- status 0

=== timer
$ args -d animals
:timer on
count "the"
:timer off
count "the"
--- stdout
timer = on
time: 0.000000 ms (engine), 0.000 ms (total)
4
time: 0.000000 ms (engine), 0.000 ms (total)
timer = off
4
--- stderr
--- status 0

=== settings precedence: :set in this session applies at once; the option wins
$ args -d animals
:set width 3
count --positions 1 "cat"
count --positions 1 --width=6 "cat"
--- stdout
width = 3
2
  …/data/animals.txt:1:5 @4  …he cat sa…
  (1 more)
2
  …/data/animals.txt:1:5 @4  the cat sat o…
  (1 more)
--- stderr
--- status 0

=== a script starts from the defaults, not from the saved width
$ args -d animals
count --positions 1 "cat"
--- stdout
2
  …/data/animals.txt:1:5 @4  the cat sat on the mat.↵the do…
  (1 more)
--- stderr
--- status 0

=== --saved-settings gives a script the saved width
$ args --saved-settings -d animals
count --positions 1 "cat"
:show width
--- stdout
2
  …/data/animals.txt:1:5 @4  …he cat sa…
  (1 more)
width       3       bytes of context on each side of snippets
--- stderr
--- status 0
