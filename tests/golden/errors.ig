# Bad input: each gives one clear message, a non-zero status, and changes nothing.

=== no dataset loaded
count "x"
--- stdout
--- stderr
error: line 1: no dataset loaded (use: load NAME)
--- status 1

=== unknown command and option
bogus
exit
count --bogus "x"
:dataset frobnicate
--- stdout
--- stderr
error: line 1: unknown command "bogus". Enter ":help" for help.
error: line 2: unknown command "exit" (to leave, :quit or Ctrl-D). Enter ":help" for help.
error: line 3: unknown option --bogus for count
  count --bogus "x"
        ^
Use ":help count" for usage.
error: line 4: unknown sub-command "frobnicate" (add, compose, attach, prepare, list, info, remove, rename, verify, check)
  :dataset frobnicate
           ^
Use ":help :dataset" for usage.
--- status 1

=== a near name is offered for a typo
coutn "x"
:datset list
count --positons 2 "x"
count --pos 2 "x"
:dataset ad x
:help co
:help contm
:set widht 3
:show fromat
--- stdout
--- stderr
error: line 1: unknown command "coutn" (did you mean count?). Enter ":help" for help.
error: line 2: unknown command ":datset" (did you mean :dataset?). Enter ":help" for help.
error: line 3: unknown option --positons for count (did you mean --positions?)
  count --positons 2 "x"
        ^
Use ":help count" for usage.
error: line 4: unknown option --pos for count (did you mean --positions?)
  count --pos 2 "x"
        ^
Use ":help count" for usage.
error: line 5: unknown sub-command "ad" (did you mean add?)
  :dataset ad x
           ^
Use ":help :dataset" for usage.
error: line 6: ambiguous command "co", could be: count, contam
  :help co
        ^
Use ":help :help" for usage.
error: line 7: no such command "contm" (did you mean contam?)
  :help contm
        ^
error: line 8: unknown setting "widht" (did you mean width?) (see :show)
  :set widht 3
       ^
Use ":help :set" for usage.
error: line 9: unknown setting "fromat" (did you mean format?)
  :show fromat
        ^
Use ":help :show" for usage.
--- status 1

=== unterminated quote and invalid escapes
count "abc
count "a\qb"
count "\x4"
--- stdout
--- stderr
error: line 1: unterminated quote
  count "abc
        ^
Use ":help count" for usage.
error: line 2: invalid escape "\q" (allowed: \n \t \\ \" \xHH)
  count "a\qb"
          ^
Use ":help count" for usage.
error: line 3: invalid escape: \x needs two hex digits
  count "\x4"
         ^
Use ":help count" for usage.
--- status 1

=== missing and unreadable sources
:dataset add nothere {DATA}/does-not-exist.txt
:dataset add bad-name! {DATA}/animals.txt
:dataset list
--- stdout
no datasets (add one with :dataset add NAME PATH)
--- stderr
error: line 1: {DATA}/does-not-exist.txt: cannot read source: No such file or directory
error: line 2: invalid dataset name "bad-name!": use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit
  :dataset add bad-name! {DATA}/animals.txt
               ^
Use ":help :dataset" for usage.
--- status 1

=== duplicate name and unknown dataset
:dataset add animals {DATA}/animals.txt
:dataset add animals {DATA}/animals.txt
load unknown
load animals
build unknown
:dataset info unknown
load animal
build aminals
--- stdout
added animals: 1 source (run: build animals)
--- stderr
error: line 2: dataset "animals" already exists
error: line 3: unknown dataset "unknown"
error: line 4: dataset animals is not built (run: build animals)
error: line 5: unknown dataset "unknown"
error: line 6: unknown dataset "unknown"
error: line 7: unknown dataset "animal" (did you mean animals?)
error: line 8: unknown dataset "aminals" (did you mean animals?)
--- status 1

=== invalid UTF-8, 0xFF, empty file, NUL bytes
:dataset add inv {DATA}/invalid.txt
build inv
:dataset add ff {DATA}/ff.txt
build ff
:dataset add empty {DATA}/empty.txt
build empty
:dataset add nul {DATA}/nul.txt
build nul
load nul
count "\x00byte"
--- stdout
added inv: 1 source (run: build inv)
added ff: 1 source (run: build ff)
added empty: 1 source (run: build empty)
added nul: 1 source (run: build nul)
built nul: 15 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded nul: 15 B, 1 doc, 1 shard
1
--- stderr
error: line 2: {DATA}/invalid.txt: invalid UTF-8 at byte offset 10
error: line 4: {DATA}/ff.txt: 0xFF byte at byte offset 7
warning: line 5: {DATA}/empty.txt is empty: build needs text in it
error: line 6: {DATA}/empty.txt: empty file
--- status 1

=== lossy repair
:dataset add inv2 {DATA}/invalid.txt --lossy
build inv2
load inv2
count "\xef\xbf\xbd"
--- stdout
added inv2: 1 source (run: build inv2)
built inv2: 21 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded inv2: 21 B, 1 doc, 1 shard
1
--- stderr
warning: line 2: 1 invalid UTF-8 byte replaced by U+FFFD
--- status 0

=== bad option values
$ args -d nul
count --positions x "a"
count --positions -1 "a"
count -p 2 "a"
count --width 99999999 "a"
build --shard-size banana
:dataset add r {DATA}/animals.txt --range 5:2
:dataset add r {DATA}/animals.txt --range abc
:dataset add r {DATA}/animals.txt --format xml
--- stdout
--- stderr
error: line 1: --positions: not an integer: "x"
  count --positions x "a"
                    ^
Use ":help count" for usage.
error: line 2: --positions: -1 is out of range (0 to 1000000)
  count --positions -1 "a"
                    ^
Use ":help count" for usage.
error: line 3: TEXT is one quoted text or plain words, not both: -p is a word of the text here (options start with two dashes)
  count -p 2 "a"
        ^
Use ":help count" for usage.
error: line 4: --width: 99999999 is out of range (0 to 10000)
  count --width 99999999 "a"
                ^
Use ":help count" for usage.
error: line 5: --shard-size: not a size: "banana" (e.g. 4096, 64M, 1G)
  build --shard-size banana
                     ^
Use ":help build" for usage.
error: line 6: bad range "5:2": start is after end
  :dataset add r {DATA}/animals.txt --range 5:2
                                            ^
Use ":help :dataset" for usage.
error: line 7: bad range "abc": expected A:B, each side empty, a byte offset or a percentage P%
  :dataset add r {DATA}/animals.txt --range abc
                                            ^
Use ":help :dataset" for usage.
error: line 8: --format: expected text, lines, jsonl, ids or jsonl-ids
  :dataset add r {DATA}/animals.txt --format xml
                                             ^
Use ":help :dataset" for usage.
--- status 1

=== bail stops at the first failure
$ args --bail
:show timer
bogus
:show timer
--- stdout
timer       off     print the engine time after each command: on or off
--- stderr
error: line 2: unknown command "bogus". Enter ":help" for help.
--- status 1

=== bad program arguments
$ args --frobnicate
--- stdout
--- stderr
infinigram: unknown option "--frobnicate"
Try "infinigram --help".
--- status 2

=== a program option without its value
$ args --home
--- stdout
--- stderr
infinigram: option --home needs an argument
Try "infinigram --help".
--- status 2

=== directories with no text
$ sh mkdir -p {TMP}/emptydir {TMP}/onlybin/.git && printf 'x\0y' > {TMP}/onlybin/a.bin && printf 'hidden' > {TMP}/onlybin/.git/config
:dataset add e1 {TMP}/emptydir
build e1
:dataset add e2 {TMP}/onlybin
build e2
:dataset list
--- stdout
added e1: 1 source (run: build e1)
added e2: 1 source (run: build e2)
  name           status         bytes documents shards  sources
  animals        registered         -         0      0  …/data/animals.txt
  e1             registered         -         0      0  …/tmp/emptydir
  e2             registered         -         0      0  …/tmp/onlybin
  empty          registered         -         0      0  …/data/empty.txt
  ff             registered         -         0      0  …/data/ff.txt
  inv            registered         -         0      0  …/data/invalid.txt
  inv2           built           21 B         1      1  …/data/invalid.txt
  nul            built           15 B         1      1  …/data/nul.txt
--- stderr
warning: line 1: {TMP}/emptydir holds no files yet: build needs some
error: line 2: {TMP}/emptydir: directory has no files
error: line 4: no text to index: 1 file skipped, e.g. {TMP}/onlybin/a.bin: binary file (NUL byte at offset 1)
--- status 1

=== a catalog that is not a database
$ args --home '{TMP}/badhome'
$ sh mkdir -p {TMP}/badhome && printf 'this is not sqlite, just text that is long enough to look like a header................................' > {TMP}/badhome/catalog.db
:dataset list
--- stdout
--- stderr
infinigram: {TMP}/badhome/catalog.db: not a catalog (not an SQLite database)
--- status 1

=== a NUL byte is text in a query only
:dataset add "animals\x00x" {DATA}/animals.txt
:dataset add animals "{DATA}/animals.txt\x00x"
build animals
load "animals\x00x"
:set width "5\x00x"
load animals
eval "{DATA}/animals.txt\x00x"
dups --write "/nowhere\x00x"
count "\x00"
--- stdout
built animals: 66 B, 1 doc, 1 shard in 0.00 s (0.0 MB/s)
loaded animals: 66 B, 1 doc, 1 shard
0
--- stderr
error: line 1: a NUL byte (\x00) can only be part of a query's text
  :dataset add "animals\x00x" {DATA}/animals.txt
               ^
Use ":help :dataset" for usage.
error: line 2: a NUL byte (\x00) can only be part of a query's text
  :dataset add animals "{DATA}/animals.txt\x00x"
                       ^
Use ":help :dataset" for usage.
error: line 4: a NUL byte (\x00) can only be part of a query's text
  load "animals\x00x"
       ^
Use ":help load" for usage.
error: line 5: a NUL byte (\x00) can only be part of a query's text
  :set width "5\x00x"
             ^
Use ":help :set" for usage.
error: line 7: a file name cannot hold a NUL byte (\x00)
  eval "{DATA}/animals.txt\x00x"
       ^
Use ":help eval" for usage.
error: line 8: a file name cannot hold a NUL byte (\x00)
  dups --write "/nowhere\x00x"
               ^
Use ":help dups" for usage.
--- status 1

=== an empty --text is refused at add; a source given twice is added with a warning
:dataset add e3 {DATA}/animals.txt --text ""
:dataset add e4 {DATA}/animals.txt {DATA}/../data/animals.txt
--- stdout
added e4: 2 sources (run: build e4)
--- stderr
error: line 1: --text: empty text (a build would refuse it)
warning: line 2: {DATA}/../data/animals.txt is given twice: its documents are indexed twice
--- status 1

=== plain words opening with a one-dash option are refused (quoted, or one word, they are text)
$ args -d nul
count -p 2 a
count "-p 2 a"
count -- -p 2 a
count -h
count - a
--- stdout
0
0
0
0
--- stderr
error: line 1: TEXT is plain words opening with -p, which looks like an option (options start with two dashes): quote the text, or put it after --, if it starts so
  count -p 2 a
        ^
Use ":help count" for usage.
--- status 1
