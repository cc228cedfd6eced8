# Settings, help, formats, prefixes, quitting.

=== help lists every command
:help
--- stdout
Commands (":help NAME" for details; unique prefixes work):
  :dataset  manage named datasets
  build     build (or rebuild) a dataset's index
  load      open a built dataset for queries
  count     count occurrences of TEXT
  predict   next-symbol distribution after TEXT
  prob      probability of a continuation (chain rule)
  backoff   Stupid Backoff scores
  eval      evaluate a model on held-out text
  generate  generate text from the corpus model
  explain   why the model predicts what it predicts
  spans     which parts of a text occur verbatim, and where
  contam    which eval items occur in the corpus (n-gram overlap)
  dups      repeated passages: how much of the corpus is duplicated, the top repeats
  search    find documents by a CNF query
  doc       print a document with line numbers
  mix       mix corpus probabilities into an LLM's next tokens
  serve     serve the datasets over HTTP (JSON, OpenAI-compatible)
  :set      change and save a setting
  :show     show settings
  :timer    show the time of each command
  :format   output format
  :help     list commands or explain one
  :quit     leave the shell
Text arguments: "quoted" with \n \t \\ \" \xHH escapes, or plain words joined by spaces.
--- stderr
--- status 0

=== help for one command, with and without the colon, and unknown
:help count
:help dataset
:help nothing
--- stdout
count [--positions K] [--width W] TEXT | --ids A,B,C
    count occurrences of TEXT

    Counts the occurrences of TEXT (bytes of the indexed text; an empty TEXT
    counts every indexed byte, one end-of-document byte per document
    included). With --positions K, lists the first K occurrences in corpus
    order: document, byte offset, line:column and a snippet with the match
    highlighted. On a token dataset (:dataset attach) give the token ids with
    --ids: the count is in tokens, a position is a document and a token
    offset, and --width counts tokens; a last id of the separator (65535 for
    u16 ids) means the document ends there.

    --ids A,B,C            token datasets: the token ids to count,
                           comma-separated
    --positions K          list up to K occurrences in corpus order (at most
                           256 MiB in all, each counted as twice the width
                           plus 512 bytes)
    --width W              bytes (tokens, on a token dataset) of context on
                           each side of a listed occurrence (the shell's
                           table, when --width is not given, narrows it so
                           that a line fits the terminal, 80 columns off one)
                           (default 30)

    example: count --positions 3 "wherefore art thou"
:dataset add NAME SOURCE... [OPTIONS] | add NAME FILE --format ids --dtype u16|u32 --separator ID [--vocab FILE] | add NAME FILE --format jsonl-ids [--field KEY] [--vocab FILE] | add NAME SOURCE... --tokenizer M.model | compose NAME A B... [--minus T,...] | attach NAME DIR --format infini-gram [--dtype u8|u16|u32] [--vocab FILE] | prepare NAME [--min-count N] | list | info NAME | remove NAME | rename OLD NEW | verify NAME | check NAME
    manage named datasets

    add registers a dataset: each SOURCE is a regular file (one document; a
    FIFO or device is refused: save a stream to a file first), a directory
    (walked recursively in sorted order, hidden files skipped, binary or
    invalid files skipped with a warning) or, with --text, inline text.
    Sources must exist now; they are read at build time (one empty now is
    accepted with a warning: the build needs text in it). list and info show
    the catalog; remove deletes a dataset and its index (when the index
    cannot be deleted, the dataset is still removed and the error names the
    folder to delete by hand); rename renames it; verify recomputes the index
    checksums (load checks those of files modified after the build); check
    walks every source tree and says whether the dataset is stale (changed
    since its build; for a decontaminated one, its eval set too), and opens
    its index as load does (an index folder gone or damaged is an error
    naming it). With --decontaminate, each build drops the documents at least
    --threshold (0.8) of whose --n-word n-grams (13) occur in the eval set,
    as the Big Friendly Filter does (exactly: the eval n-grams go in a hash
    set), reports how many per source, and records the eval set's hash;
    --flag-only keeps them and lists them in :dataset info. With --casefold
    the index holds the case-folded text (ß and SS both become ss, Σ and ς
    become σ) plus a map back to the original, about 0.13 bytes per byte on
    mostly-ASCII text (see the man page for the cost). compose defines a
    dataset made of built datasets A B... (in that order) without copying
    anything: every query runs over their indexes as one corpus and answers
    as one dataset built from all their sources would (counts add; documents
    are numbered on from member to member; positions, doc and search name the
    member). A member rebuilt is picked up at the next load; compositions
    nest. With --minus T, T's documents — each a byte-for-byte copy of a
    document of the members, checked when composing and at each load — are
    taken away: counts are the members' minus T's (exact, since an occurrence
    never crosses a document's end), the first matching copy of each is never
    listed, and later documents are renumbered, so answers equal a rebuild
    without them. Members must index text the same way (normalisation, case
    folding, pointer width). A dataset a composition uses cannot be removed.
    On a case-folded composition a copy taken away must match the original
    bytes too. dups is refused with --minus (it reads the suffix arrays,
    which still hold what is taken away), and a dataset taken away may not
    itself take datasets away. After a member is rebuilt, build warns about
    the compositions made of it, however deep, that no longer load; :dataset
    list shows them broken when their members no longer fit together (their
    manifests say so; a copy taken away that is no longer in a member is
    found by opening it: :dataset check and load say so, and the server lists
    such a dataset broken with the error); it shows a dataset broken too when
    its index directory is gone. attach records an index of token ids written
    by the infini-gram indexer (layouts v4 and v6: tokenized, table and
    offset files per shard, optional metadata and metaoff) as a token
    dataset, read-only and without copying: nothing in DIR is written; attach
    checks the file sizes, the document offsets, and every separator and
    suffix-array row of a shard of up to a million tokens (of a larger one,
    about a thousand: :dataset verify reads them all, and a query that meets
    a row pointing inside a token or past the text fails as corrupt), and the
    dataset turns stale when a file of DIR or its vocabulary changes. On a
    token dataset count, predict, prob, backoff, generate, explain, spans,
    eval, search, mix and doc work in tokens: give token ids with --ids
    A,B,C; positions are a document and a token offset; predict gives next
    tokens (every model; --alpha over the vocabulary) with their ids and
    text; lengths, --n, --max, --min-len and --max-context count tokens; doc
    shows the document through the vocabulary (--range counts tokens) and its
    metadata. The other commands (contam, dups) say they do not run on token
    datasets yet. prepare makes an attached dataset's next-token table: the
    exact histogram of next tokens after every context of one, two or three
    tokens seen at least --min-count times (by default a 1,024th of its
    tokens, so at most 1,024 of each length), computed once (a few seconds on
    a 1 GiB index; Ctrl-C cancels, until the new table is in place) and
    written to the home's tables directory, never into DIR. It is made in
    memory: one that would pass a quarter of the machine's memory (a small
    --min-count on a large index) is refused, saying so. Without it, the
    first distribution after such a context costs one bisection per distinct
    next token (tens of milliseconds); with it, predict reads the
    distribution in place (tens of microseconds on a 1 GiB index). Answers
    are the same either way. attach does not make it, so that attaching stays
    quick (its own checks take tens of milliseconds a shard of a million
    tokens); a load uses the table and checks its header, each context's
    entries are checked (checksum, order, probabilities) the first time they
    are read (a damaged table is an error naming the file; so is one made by
    an older version: prepare again), the dataset's table goes stale with its
    files, and remove deletes it.

    --format text|lines|jsonl|ids|jsonl-ids|infini-gram add: how files become
                           documents (a file, each non-empty line, each JSONL
                           record; ids: a flat little-endian array of token
                           ids, --separator ending each document; jsonl-ids:
                           each JSONL record's --field is an array of token
                           ids); attach: the layout of the index directory
                           (infini-gram)
    --field KEY            add: the JSONL field holding the text (default
                           "text") or, with --format jsonl-ids, the ids
                           (default "ids")
    --tokenizer M.model    add: a token dataset: the text is tokenised with
                           this SentencePiece model at build (line by line,
                           as spm_encode does, in parallel across --jobs; the
                           text as it is, the model normalising it), queries
                           given as text too, and ids are shown as its
                           pieces; the model's checksum is recorded and a
                           changed or missing model is refused at load;
                           --casefold and --decontaminate do not apply
    --separator ID         add --format ids: the id that ends every document
                           (the file's last id)
    --range A:B            add: byte range of each file: offsets or P% of its
                           size, start inclusive, end exclusive (text; files
                           of ids are read whole); an offset inside a
                           character is an error, a percentage moves on to
                           the next character's start (both ends: 0:P% and
                           P%: split a file whole)
    --text TEXT            add: an inline text source (repeatable)
    --no-normalize         add: keep the bytes as they are (default: Unicode
                           NFC; with --tokenizer always as they are)
    --lossy                add: replace invalid UTF-8 by U+FFFD instead of
                           failing
    --strict               add: in directories, treat binary or invalid files
                           as errors instead of skipping them
    --casefold             add: index the Unicode case folding of the text
                           (after NFC), so that counts ignore case; queries
                           are folded too (an answer's "query" is the folded
                           text searched), locations, snippets and doc show
                           the original text, and predict and generate give
                           distributions over the folded bytes
    --decontaminate FILE   add: at each build, drop the documents whose
                           n-grams are in this eval set (one item per
                           non-empty line, or JSONL with
                           --decontaminate-field) at or above --threshold
    --decontaminate-field KEY add: the eval set is JSONL: each record's KEY
                           is an item
    --n N                  add: decontamination n-gram size in
                           white-space-separated words (default 13)
    --threshold T          add: share of a document's n-grams found in the
                           eval set that catches it (default 0.8)
    --lowercase            add: compare lowercased n-grams (the indexed text
                           keeps its case)
    --flag-only            add: keep the documents caught and list them in
                           :dataset info instead of dropping them
    --minus T,...          compose: take away the documents of these datasets
                           (each a copy of a document of the members)
    --dtype u8|u16|u32     attach: the width of the token ids (default:
                           inferred from the file sizes); add --format ids:
                           the width of the ids in the file (u16 or u32)
    --vocab FILE           attach, add --format ids|jsonl-ids: the vocabulary
                           tokens are shown with (a tokenizer.json, an
                           id-to-text JSON map, a JSON array of strings or a
                           SentencePiece .model, which also tokenises text
                           queries; default: ids shown as numbers); add
                           refuses ids at or beyond its size and records its
                           checksum (a changed or missing vocabulary is
                           refused at load)
    --version 4|6          attach: the infini-gram layout version (default:
                           detected; v5 indexes are refused)
    --min-count N          prepare: contexts of one, two or three tokens seen
                           at least N times get their next tokens in the
                           table (default: a 1,024th of the dataset's tokens,
                           at least 2)

    example: :dataset add kjv bible.txt
--- stderr
error: line 3: no such command "nothing"
  :help nothing
        ^
--- status 1

=== settings
:show
:set width 10
:show width
:set nosuch 1
:set timer maybe
:set shard-size 64M
:set max-context 2000000000
:set max-context " 5"
:set width 10001
:set max-context -1
--- stdout
format      table   output format: table or json
timer       off     print the engine time after each command: on or off
color       auto    colour: auto (terminal only, honours NO_COLOR), on, off
width       30      bytes of context on each side of snippets
shard-size  1G      default shard size for build
max-context none    bytes of context models use (none: each command's own default: all, or 100 for eval)
width = 10
width       10      bytes of context on each side of snippets
shard-size = 64M
max-context = -1
--- stderr
error: line 4: unknown setting "nosuch" (see :show)
  :set nosuch 1
       ^
Use ":help :set" for usage.
error: line 5: timer: expected on or off
  :set timer maybe
             ^
Use ":help :set" for usage.
error: line 7: max-context: 2000000000 is out of range (-1 to 1000000000)
  :set max-context 2000000000
                   ^
Use ":help :set" for usage.
error: line 8: max-context: not an integer: " 5"
  :set max-context " 5"
                   ^
Use ":help :set" for usage.
error: line 9: width: 10001 is out of range (0 to 10000)
  :set width 10001
             ^
Use ":help :set" for usage.
--- status 1

=== settings persist; scripts start from defaults and :show the saved value beside
:show width
:show timer
--- stdout
width       30      bytes of context on each side of snippets [saved: 10]
timer       off     print the engine time after each command: on or off
--- stderr
--- status 0

=== format switch
:format json
:show timer
:format table
:show timer
:format yaml
--- stdout
{"command":":format","key":"format","value":"json","elapsed_ms":0}
{"command":":show","settings":{"timer":"off"},"elapsed_ms":0}
format = table
timer       off     print the engine time after each command: on or off
--- stderr
error: line 5: format: expected table or json
  :format yaml
          ^
Use ":help :format" for usage.
--- status 1

=== unique prefixes and ambiguity
:he count
:s
:sh width
:q
:show width
--- stdout
count [--positions K] [--width W] TEXT | --ids A,B,C
    count occurrences of TEXT

    Counts the occurrences of TEXT (bytes of the indexed text; an empty TEXT
    counts every indexed byte, one end-of-document byte per document
    included). With --positions K, lists the first K occurrences in corpus
    order: document, byte offset, line:column and a snippet with the match
    highlighted. On a token dataset (:dataset attach) give the token ids with
    --ids: the count is in tokens, a position is a document and a token
    offset, and --width counts tokens; a last id of the separator (65535 for
    u16 ids) means the document ends there.

    --ids A,B,C            token datasets: the token ids to count,
                           comma-separated
    --positions K          list up to K occurrences in corpus order (at most
                           256 MiB in all, each counted as twice the width
                           plus 512 bytes)
    --width W              bytes (tokens, on a token dataset) of context on
                           each side of a listed occurrence (the shell's
                           table, when --width is not given, narrows it so
                           that a line fits the terminal, 80 columns off one)
                           (default 30)

    example: count --positions 3 "wherefore art thou"
width       30      bytes of context on each side of snippets [saved: 10]
--- stderr
error: line 2: ambiguous command ":s", could be: :set, :show
--- status 1

=== quit ends the script
:quit
:show width
--- stdout
--- stderr
--- status 0

=== -c commands run in order, then stop
$ args -c ':show width' -c ':show timer'
:show format
--- stdout
width       30      bytes of context on each side of snippets [saved: 10]
timer       off     print the engine time after each command: on or off
--- stderr
--- status 0

=== version and help
$ args --version
--- stdout
infinigram 0.1.0 (index format 1, catalog schema 7)
--- stderr
--- status 0
