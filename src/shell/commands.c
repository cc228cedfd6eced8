/*
 * The command table — the one source for dispatch, tab completion, `:help`, `--help`
 * and the COMMANDS section of the man page — with the help and man-page writers that read
 * it. The dispatcher that looks commands up in it is in repl.c.
 */
#include <stdlib.h>
#include <string.h>

#include "../serve/server.h"
#include "shell.h"

#define SH_STR_(x) #x
#define SH_STR(x) SH_STR_(x) /* a number in a help text, from the constant that sets it */

static const char *const dataset_subs[] = {"add", "compose", "attach", "prepare", "list", "info", "remove", "rename", "verify", "check", NULL};

static const sh_opt dataset_opts[] = {
    {"format", "text|lines|jsonl|ids|jsonl-ids|infini-gram", "add: how files become documents (a file, each non-empty "
     "line, each JSONL record; ids: a flat little-endian array of token ids, --separator ending each document; "
     "jsonl-ids: each JSONL record's --field is an array of token ids); attach: the layout of the index directory "
     "(infini-gram)"},
    {"field", "KEY", "add: the JSONL field holding the text (default \"text\") or, with --format jsonl-ids, the ids "
     "(default \"ids\")"},
    {"tokenizer", "M.model", "add: a token dataset: the text is tokenised with this SentencePiece model at build "
     "(line by line, as spm_encode does, in parallel across --jobs; the text as it is, the model normalising it), "
     "queries given as text too, and ids are shown as its pieces; the model's checksum is recorded and a changed or "
     "missing model is refused at load; --casefold and --decontaminate do not apply"},
    {"separator", "ID", "add --format ids: the id that ends every document (the file's last id)"},
    {"range", "A:B", "add: byte range of each file: offsets or P% of its size, start inclusive, end exclusive (text; files of "
     "ids are read whole); an offset inside a character is an error, a percentage moves on to the next "
     "character's start (both ends: 0:P% and P%: split a file whole)"},
    {"text", "TEXT", "add: an inline text source (repeatable)"},
    {"no-normalize", NULL, "add: keep the bytes as they are (default: Unicode NFC; with --tokenizer always as they are)"},
    {"lossy", NULL, "add: replace invalid UTF-8 by U+FFFD instead of failing"},
    {"strict", NULL, "add: in directories, treat binary or invalid files as errors instead of skipping them"},
    {"casefold", NULL, "add: index the Unicode case folding of the text (after NFC), so that counts ignore case; "
     "queries are folded too (an answer's \"query\" is the folded text searched), locations, snippets and doc show the original text, and predict and generate "
     "give distributions over the folded bytes"},
    {"decontaminate", "FILE", "add: at each build, drop the documents whose n-grams are in this eval set (one item per "
     "non-empty line, or JSONL with --decontaminate-field) at or above --threshold"},
    {"decontaminate-field", "KEY", "add: the eval set is JSONL: each record's KEY is an item"},
    {"n", "N", "add: decontamination n-gram size in white-space-separated words (default 13)"},
    {"threshold", "T", "add: share of a document's n-grams found in the eval set that catches it (default 0.8)"},
    {"lowercase", NULL, "add: compare lowercased n-grams (the indexed text keeps its case)"},
    {"flag-only", NULL, "add: keep the documents caught and list them in :dataset info instead of dropping them"},
    {"minus", "T,...", "compose: take away the documents of these datasets (each a copy of a document of the members)"},
    {"dtype", "u8|u16|u32", "attach: the width of the token ids (default: inferred from the file sizes); add "
     "--format ids: the width of the ids in the file (u16 or u32)"},
    {"vocab", "FILE", "attach, add --format ids|jsonl-ids: the vocabulary tokens are shown with (a tokenizer.json, an "
     "id-to-text JSON map, a JSON array of strings or a SentencePiece .model, which also tokenises text queries; "
     "default: ids shown as numbers); add refuses ids at or beyond its size and records its checksum (a changed "
     "or missing vocabulary is refused at load)"},
    {"version", "4|6", "attach: the infini-gram layout version (default: detected; v5 indexes are refused)"},
    {"min-count", "N", "prepare: contexts of one, two or three tokens seen at least N times get their next tokens in the "
     "table (default: a 1,024th of the dataset's tokens, at least 2)"},
    {NULL, NULL, NULL},
};
static const sh_opt build_opts[] = {
    {"shard-size", "SIZE", "target shard size (bytes, or with K/M/G suffix; default 1G); documents never cross shards"},
    {"pointer-width", "4|5", "5 forces the 64-bit sorter and 5-byte suffix-array pointers (normally only for shards "
     "of 4 GiB or more)"},
    {"jobs", "N", "shards sorted at the same time, and threads tokenising the text of a dataset added with "
     "--tokenizer (default: one per core)"},
    {"memory", "SIZE", "peak memory budget; shards are made smaller to fit, and text to tokenise is taken an eighth of it at a "
     "time (default: half the RAM; text to tokenise, 64 MiB at a time)"},
    {"sorter", "processes|in-process", "where shards are sorted: child processes, in parallel and cancelled at once, "
     "shards under 8 MiB in threads (default), or this process, one shard at a time"},
    {"lcp", NULL, "also write each shard's lcp file (shards of 8 MiB and more): counts on a cold page cache take "
     "about half the page faults, for 2.16 more bytes of index per byte of text (default: not written)"},
    {NULL, NULL, NULL},
};
static const sh_opt serve_opts[] = {
    {"host", "ADDR", "IPv4 address or host name to listen on (default 127.0.0.1: this machine only)"},
    {"port", "N", "port (default 8080)"},
    {"threads", "N", "requests computed at the same time, each on a compute thread (default: one per core; more "
                     "wait their turn, oldest first, whichever connection they came on); the connections are served "
                     "by threads of their own, so health checks, listings and streams are answered while long "
                     "computations run"},
    {"datasets", "A,B", "serve only these datasets (default: every built one)"},
    {"body-limit", "BYTES", "largest request body accepted (default 1048576)"},
    {"dups-memory", "SIZE", "memory budget of each /v1/dups request (default 4G, as dups; a request cannot set it)"},
    {"timeout", "SECONDS", "a client has this long to send a whole request, else 408; idle keep-alive connections "
     "close after it too (default 30)"},
    {"deadline", "SECONDS", "a request is computed for at most this long, else it is stopped and answered 503 "
     "(sending the answer is bounded by --timeout between reads); a request whose client closes its side of the "
     "connection (a half-close, shutdown(SHUT_WR), included) is stopped at once (default 300)"},
    {NULL, NULL, NULL},
};
static const sh_opt no_opts[] = {{NULL, NULL, NULL}};

const sh_cmd sh_cmds[] = {
    {":dataset", "add NAME SOURCE... [OPTIONS] | add NAME FILE --format ids --dtype u16|u32 --separator ID "
     "[--vocab FILE] | add NAME FILE --format jsonl-ids [--field KEY] [--vocab FILE] | add NAME SOURCE... "
     "--tokenizer M.model | compose NAME A B... [--minus T,...] | attach NAME DIR --format "
     "infini-gram [--dtype u8|u16|u32] [--vocab FILE] | prepare NAME [--min-count N] | list | info NAME | remove NAME | "
     "rename OLD NEW | verify NAME | check NAME",
     "manage named datasets",
     "add registers a dataset: each SOURCE is a regular file (one document; a FIFO or device is refused: save a stream to a file first), a directory (walked "
     "recursively in sorted order, hidden files skipped, binary or invalid files skipped with a "
     "warning) or, with --text, inline text. Sources must exist now; they are read at build "
     "time (one empty now is accepted with a warning: the build needs text in it). list and info show the catalog; remove deletes a dataset and its index (when the index cannot be deleted, the dataset is still removed and the error names the folder to delete by hand); rename "
     "renames it; verify recomputes the index checksums (load checks those of files modified "
     "after the build); check walks every source tree and "
     "says whether the dataset is stale (changed since its build; for a decontaminated one, its eval set too), and opens "
     "its index as load does (an index folder gone or damaged is an error naming it). With --decontaminate, each "
     "build drops the documents at least --threshold (0.8) of whose --n-word n-grams (13) occur in "
     "the eval set, as the Big Friendly Filter does (exactly: the eval n-grams go in a hash set), "
     "reports how many per source, and records the eval set's hash; --flag-only keeps them and "
     "lists them in :dataset info. "
     "With --casefold the index holds the case-folded text (ß and SS "
     "both become ss, Σ and ς become σ) plus a map back to the original, about 0.13 bytes per byte "
     "on mostly-ASCII text (see the man page for the cost). "
     "compose defines a dataset made of built datasets A B... (in that order) without copying "
     "anything: every query runs over their indexes as one corpus and answers as one dataset "
     "built from all their sources would (counts add; documents are numbered on from member to "
     "member; positions, doc and search name the member). A member rebuilt is picked up at the "
     "next load; compositions nest. With --minus T, T's documents — each a byte-for-byte copy of "
     "a document of the members, checked when composing and at each load — are taken away: "
     "counts are the members' minus T's (exact, since an occurrence never crosses a document's "
     "end), the first matching copy of each is never listed, and later documents are renumbered, "
     "so answers equal a rebuild without them. Members must index text the same way "
     "(normalisation, case folding, pointer width). A dataset a composition uses cannot be removed. "
     "On a case-folded composition a copy taken away must match the original bytes too. dups is "
     "refused with --minus (it reads the suffix arrays, which still hold what is taken away), and "
     "a dataset taken away may not itself take datasets away. After a member is rebuilt, build "
     "warns about the compositions made of it, however deep, that no longer load; :dataset list "
     "shows them broken when their members no longer fit together (their manifests say so; a copy "
     "taken away that is no longer in a member is found by opening it: :dataset check and load say "
     "so, and the server lists such a dataset broken with the error); it shows a dataset broken too "
     "when its index directory is gone. "
     "attach records an index of token ids written by the infini-gram indexer (layouts v4 and v6: "
     "tokenized, table and offset files per shard, optional metadata and metaoff) as a token dataset, "
     "read-only and without copying: nothing in DIR is written; attach checks the file sizes, the "
     "document offsets, and every separator and suffix-array row of a shard of up to a million "
     "tokens (of a larger one, about a thousand: :dataset verify reads them all, and a query that "
     "meets a row pointing inside a token or past the text fails as corrupt), and the dataset turns stale "
     "when a file of DIR or its vocabulary changes. On a token dataset count, predict, prob, backoff, generate, explain, "
     "spans, eval, search, mix and doc work in tokens: give token ids with --ids A,B,C; positions are a document and a "
     "token offset; predict gives next tokens (every model; --alpha over the vocabulary) with their "
     "ids and text; lengths, --n, --max, --min-len and --max-context count tokens; doc shows the "
     "document through the vocabulary (--range counts tokens) and its metadata. The other commands "
     "(contam, dups) say they do not run on token datasets yet. "
     "prepare makes an attached dataset's next-token table: the exact histogram of next tokens after "
     "every context of one, two or three tokens seen at least --min-count times (by default a 1,024th of its "
     "tokens, so at most 1,024 of each length), computed once (a few seconds on a 1 GiB index; Ctrl-C cancels, until the new table is in place) and "
     "written to the home's tables directory, never into DIR. It is made in memory: one that would pass a quarter "
     "of the machine's memory (a small --min-count on a large index) is refused, saying so. Without it, the first distribution after such a "
     "context costs one bisection per distinct next token (tens of milliseconds); with it, predict reads the "
     "distribution in place (tens of microseconds on a 1 GiB index). Answers are the same either way. attach does "
     "not make it, so that attaching stays quick (its own checks take tens of milliseconds a shard of a million tokens); a load uses the table and checks its header, "
     "each context's entries are checked (checksum, order, probabilities) the first time they are read (a damaged "
     "table is an error naming the file; so is one made by an older version: prepare again), the dataset's "
     "table goes stale with its files, and remove deletes it.",
     dataset_opts, dataset_subs, ":dataset add kjv bible.txt", cmd_dataset, NULL, NULL},
    {"build", "[NAME] [--shard-size SIZE] [--pointer-width 4|5] [--jobs N] [--memory SIZE] [--sorter processes|in-process] [--lcp]",
     "build (or rebuild) a dataset's index",
     "Reads the sources, normalises them, sorts each shard's suffixes and writes a new index "
     "directory, then switches the catalog to it in one transaction: an interrupted or failed "
     "build leaves the previous index in force. Without NAME, builds the loaded dataset. "
     "With several jobs the corpus is cut into a multiple of N shards of near-equal size (two "
     "rounds of N once each shard stays 128 MiB or more, so that reading, sorting and writing "
     "overlap), each at most --shard-size. Ctrl-C cancels.",
     build_opts, NULL, "build kjv", cmd_build, NULL, NULL},
    {"load", "NAME", "open a built dataset for queries",
     "Maps the dataset's index (instant, whatever its size) and makes it the current dataset. "
     "Warns when a source changed since the build (the dataset is stale): files by size and "
     "time; directories by every file below them, or by their own time when they hold more "
     "than " SH_STR(IG_CHECK_BOUNDED_ENTRIES) " entries (then :dataset check walks them). Refuses an index file modified "
     "since the build whose checksum no longer matches.",
     no_opts, NULL, "load kjv", cmd_load, NULL, NULL},
    {"count", "[--positions K] [--width W] TEXT | --ids A,B,C", "count occurrences of TEXT",
     "Counts the occurrences of TEXT (bytes of the indexed text; an empty TEXT counts every "
     "indexed byte, one end-of-document byte per document included). With --positions K, "
     "lists the first K occurrences in corpus order: document, byte offset, line:column and a "
     "snippet with the match highlighted. On a token dataset (:dataset attach) give the token "
     "ids with --ids: the count is in tokens, a position is a document and a token offset, and "
     "--width counts tokens; a last id of the separator (65535 for u16 ids) means the document "
     "ends there.",
     NULL, NULL, "count --positions 3 \"wherefore art thou\"", NULL, &ig_op_count, &sh_count_face},
    {"predict", "[MODEL OPTIONS] [--top K] [--bytes] TEXT | --ids A,B,C", "next-symbol distribution after TEXT",
     "Shows the context with its longest matching suffix highlighted, the effective n "
     "(1 + the length of that suffix), how often the suffix occurs, whether the estimate is "
     "sparse (one possible symbol), and the most probable next characters with their raw "
     "counts, probabilities and bars. Exact: computed from suffix-array intervals, never "
     "sampled. The end of a document shows as <end>. The models are over bytes: with no context "
     "matched (effective n 1, or --n 1) every byte of the corpus is a candidate, the inner bytes of "
     "multi-byte characters too, shown as \\xNN. A multi-byte character's probability here weighs "
     "each level's count of the whole character by the weights chosen at the context; prob, eval and "
     "generate (and the logprobs of /v1/completions) multiply its bytes' probabilities, a mixture "
     "(--interp, --weighted, --alpha) read again after each byte, so for a mixture the two can differ "
     "on such characters (for the ∞-gram and --n they agree). On a token dataset give the context as "
     "token ids with --ids: the next tokens are listed with their ids, text (through the "
     "dataset's vocabulary) and counts; every model runs there over next tokens (--alpha: "
     "Laplace over the vocabulary), and lengths and --max-context count tokens.",
     NULL, NULL, "predict --interp 3 \"What say\"", NULL, &ig_op_predict, &sh_predict_face},
    {"prob", "[MODEL OPTIONS] [--bytes] \"TEXT\" \"CONTINUATION\" | --ids A,B --next-ids C,D", "probability of a continuation (chain rule)",
     "Multiplies the model's probability of each byte of CONTINUATION given TEXT and the bytes "
     "before it, each factor with its own effective n; shows the factors per character (or "
     "per byte with --bytes), the probability and its log2. On a token dataset the context and "
     "continuation are token ids (--ids, which may be \"\", and --next-ids): one factor per token.",
     NULL, NULL, "prob \"wherefore art \" \"thou\"", cmd_prob, &ig_op_prob, NULL},
    {"backoff", "[--factor F] [--threshold T] [--top K] [--bytes] [--max-context L] TEXT | --ids A,B,C", "Stupid Backoff scores",
     "Scores every symbol seen after any suffix of TEXT: the longest suffix (at most the one "
     "seen T times) where it occurs gives count/total, times F per byte of context dropped. "
     "Scores are not probabilities; the normalised column divides by their sum. On a token "
     "dataset the context is token ids (--ids) and every next token is scored, F per token "
     "dropped.",
     NULL, NULL, "backoff \"O Romeo, Romeo! wherefore\"", NULL, &ig_op_backoff, &sh_backoff_face},
    {"eval", "[MODEL OPTIONS] [--threads N] FILE [--range A:B] | --text TEXT | --ids A,B,C", "evaluate a model on held-out text",
     "Scores every byte of the text after the first, given at most --max-context bytes before "
     "it (default 100): bits per byte, perplexity, the positions with probability 0 (each "
     "counted at the floor 1e-10 and reported), ∞-gram agreement (P > 0.5 for the true byte), "
     "split by sparse and non-sparse estimates, and a histogram of effective n. Ctrl-C stops "
     "it and reports the partial result. On a token dataset FILE holds text when the dataset "
     "has its tokenizer (added with --tokenizer: the text is tokenised as its documents were), else "
     "token ids (separated by commas or white space; a separator id ends a document); or give --ids "
     "or --text: every token is scored (perplexity per token, bits per token; --max-context counts tokens) with any model.",
     NULL, NULL, "eval --sbi --interp 2 datasets/tinyshakespeare.txt --range 90%:", NULL, &ig_op_eval, &sh_eval_face},
    {"generate", "[MODEL OPTIONS] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--max N] [--stop STRING]... [--no-stop-at-end] [TEXT | --ids A,B,C]",
     "generate text from the corpus model",
     "Samples one byte at a time from the model (default: --interp 2) after TEXT, printing "
     "characters as they are produced; stops at the end of a document, a --stop string, "
     "--max characters, or Ctrl-C (the text so far is kept). Ends with a summary: time, seed, "
     "median effective n, the longest span copied verbatim from the corpus and where it comes "
     "from, and the share of the output inside corpus spans of 20 bytes or more. On a token "
     "dataset the prompt is given as --ids, one token is sampled at a time (default model: the "
     "∞-gram; any other too), shown through the vocabulary as it comes, and --max, --top-k and the "
     "summary count tokens.",
     NULL, NULL, "generate --max 300 --temperature 0.8 --seed 7 \"ROMEO:\\n\"", NULL, &ig_op_generate, &sh_generate_face},
    {"explain", "[MODEL OPTIONS] [--top K] [--positions K] [--width W] [--bytes] TEXT | --ids A,B,C | --step N | --last", "why the model predicts what it predicts",
     "Shows the context with its matched suffix, the n-gram profile (for every suffix length, "
     "how often it occurs and how often it is followed by the predicted symbol), the top "
     "candidates with the share each level contributes, and for each candidate the corpus "
     "positions where the suffix was followed by it (suffix and continuation highlighted). On a "
     "token dataset the context is token ids (--ids, or --step/--last after generate): lengths "
     "count tokens, candidates are tokens, positions are a document and a token offset.",
     NULL, NULL, "explain --step 12", NULL, &ig_op_explain, &sh_explain_face},
    {"spans", "[--min-len N] [--max-count C] [--words] [--positions K] [--rank ORDER] [--candidates N] [--k1 K1] [--b B] TEXT | --ids A,B,C | --last", "which parts of a text occur verbatim, and where",
     "Finds the maximal spans of TEXT that occur in the corpus (matching statistics: linear "
     "in the text length), keeps those of at least --min-len bytes (and at most --max-count "
     "occurrences), and lists each with its count and its first --positions occurrences in corpus "
     "order (several may be in one document; --rank bm25 lists one a document, the most relevant "
     "first); the novelty figure is the share of the text not covered by spans of --min-len bytes "
     "or more, whatever their count (--max-count does not apply to it, and --words trims the "
     "spans it lists to whole words, not the novelty). On a token dataset the text is token "
     "ids (--ids, or --last after generate): spans, --min-len and novelty count tokens, sources "
     "are a document and a token offset (--words and --rank bm25 apply to byte datasets).",
     NULL, NULL, "spans --min-len 12 \"O Romeo, Romeo! wherefore art thou\"", NULL, &ig_op_spans, &sh_spans_face},
    {"contam", "FILE [--field KEY] | --eval-dataset NAME [--n N] [--bytes] [--lowercase] [--threshold T] [--partial P] [--list K]",
     "which eval items occur in the corpus (n-gram overlap)",
     "Reads an eval set (one item per non-empty line, JSONL with --field, or the documents of a "
     "built dataset with --eval-dataset) and cuts each item "
     "into n-grams as the Big Friendly Filter does: --n words (default 13) split at white space, "
     "searched joined by single spaces, so a copy whose words are separated otherwise (newlines, "
     "tabs, several spaces) is not found, and punctuation stays part of its word; an item with "
     "fewer words is one n-gram. --bytes counts byte n-grams instead. Each n-gram is counted "
     "exactly in the index; the overlap is the share of an item's n-grams that occur. Lists the "
     "items with the highest overlap with their longest match in the corpus and its first source, "
     "then how many items are contaminated (overlap at or above --threshold, default 0.8) and "
     "partly (--partial, default 0.2), and the false-positive rate BFF's 256 GiB Bloom filter "
     "would have had on the same distinct n-grams. Ctrl-C stops it and reports the items done.",
     NULL, NULL, "contam evalset.jsonl --field question --n 13", cmd_contam, &ig_op_contam, NULL},
    {"dups", "[--min-len K] [--top N] [--positions K] [--within-doc | --across-docs] [--memory SIZE] [--threads N] [--write FILE]",
     "repeated passages: how much of the corpus is duplicated, the top repeats",
     "Finds every maximal string of at least --min-len bytes (default 100) that occurs twice "
     "or more in the corpus, across shards as well as within them and never across a document "
     "end, from the suffix arrays with the common prefix of neighbouring suffixes. Reports the "
     "bytes inside an occurrence after the first of such a repeat (their share of the corpus, "
     "and how many have an earlier copy in the same document or in an earlier one), the number "
     "of distinct repeats, and the top repeats by length × count with their sources. "
     "--within-doc or --across-docs keeps only the repeats (and the duplicated bytes) of that "
     "kind. --write FILE writes the corpus with every later copy removed as JSONL records "
     "{name, source_line, text}, one per kept piece of each document (removed ranges never "
     "join the text around them), ready for :dataset add --format jsonl; the file appears only "
     "when complete. Memory: 2 bits per corpus byte (--memory is the budget). Ctrl-C cancels.",
     NULL, NULL, "dups --min-len 200 --top 5", cmd_dups, &ig_op_dups, NULL},
    {"search", "QUERY [--within W] [--limit N] [--offset N] [--budget N] [--width W]", "find documents by a CNF query",
     "QUERY is an AND of clauses, each a term or a parenthesised OR of terms; terms are "
     "quoted strings. Counts matching documents exactly (when a clause is too frequent to "
     "enumerate it is sampled, and the output says so and by how much it scaled), and lists "
     "them with their number of hits, the line of the first hit and a snippet. On a token "
     "dataset each quoted term is a list of token ids (\"3,260\" AND (\"802\" OR \"545\")), "
     "--within counts tokens and the first hit is a token offset.",
     NULL, NULL, "search \"Romeo\" AND (\"Juliet\" OR \"Tybalt\")", cmd_search, &ig_op_search, NULL},
    {"doc", "ID|NAME [--lines A:B | --range A:B]", "print a document with line numbers",
     "Prints a document of the loaded index (by id, or by its unique name), or some of its "
     "lines or bytes. On a token dataset the document is shown through the vocabulary, with "
     "its metadata line (read up to 1 MiB: a longer record is not shown, and its JSON is null); "
     "--range counts tokens.",
     NULL, NULL, "doc 0 --lines 2200:2210", NULL, &ig_op_doc, &sh_doc_face},
    {"mix", "CONTEXT|--ids A,B,C --llm FILE [--lambda L | --lambda-sparse A --lambda-dense B | --adaptive] [--alpha A] [--top K]",
     "mix corpus probabilities into an LLM's next tokens",
     "For each candidate token of an LLM (read from FILE), computes its corpus probability by "
     "the chain rule over its bytes (each factor at its own effective n; tokens sharing a "
     "prefix share its factors) and the mixture λ·P_corpus + (1−λ)·P_llm (in log space), "
     "renormalised over the given tokens, with the ranks before and after. On a token dataset the "
     "LLM shares the dataset's vocabulary: the context is --ids, the candidates are "
     "{\"token_id\", \"logprob\"} and each corpus probability is the model's next-token "
     "probability, with no byte chain rule.",
     NULL, NULL, "mix \"Wherefore art thou\" --llm top20.json --lambda 0.3", cmd_mix, &ig_op_mix, NULL},
    {"serve", "[--host 127.0.0.1] [--port N] [--threads N] [--datasets a,b] [--body-limit BYTES] [--timeout SECONDS] [--deadline SECONDS] [--dups-memory SIZE]", "serve the datasets over HTTP (JSON, OpenAI-compatible)",
     "Starts an HTTP/1.1 server: GET / (the web explorer: a page built into the program to browse "
     "datasets, count with a concordance, predict, generate and trace text to its sources; it talks "
     "only to this server, under a strict Content-Security-Policy), GET /v1 (the reference of every "
     "endpoint and field), /v1/health, "
     "/v1/datasets, /v1/models, /v1/models/NAME; POST /v1/count, "
     "/v1/predict, /v1/prob, /v1/backoff, /v1/eval, /v1/explain, /v1/spans, /v1/search, /v1/doc, "
     "/v1/generate, /v1/mix, /v1/contam, /v1/dups (the body names \"dataset\", the text as \"query\" and options "
     "as fields; \"queries\": [...] for a batch), and OpenAI-compatible /v1/completions and "
     "/v1/chat/completions (model = dataset; messages are joined as \"role: content\" lines "
     "followed by \"assistant: \"). Answers are the objects --json prints, without \"command\" (the path "
     "names it). Ctrl-C (or SIGTERM) stops it within moments: no new connection is "
     "taken, what is computing is cancelled, and every request computing, waiting or streaming is answered "
     "503 \"the server is stopping\" (a stream as its last event). Rebuilt datasets are picked up without a "
     "restart. Errors are {\"error\": {\"message\", \"type\", \"code\"}} with status 400 (bad JSON or "
     "field, named as in the request), 404 (unknown dataset or path), 405 (wrong method), 413 (body "
     "over --body-limit), 414 or 431 (URL or headers too long), 501 (a Transfer-Encoding other than "
     "chunked) or 408 (request not complete within --timeout); two Host headers, Content-Length "
     "headers that disagree or Transfer-Encoding with Content-Length are a 400, and the connection "
     "is closed; a request that is not HTTP at all (a malformed request line, header or chunk, an "
     "unsupported version) gets libmicrohttpd's own small HTML page (400, 413 or 505) instead, and bytes "
     "libmicrohttpd does not take for a request line (control bytes in it, or no line end) wait for --timeout "
     "and get a 408. With 768 of the 1,024 connections it takes open, the server is crowded: connections "
     "idle between requests are closed, and a request not whole within 2 s gets a 408. Saved "
     "settings apply only with --saved-settings, as for scripts. See HTTP API in "
     "the man page.",
     serve_opts, NULL, "serve --port 8080", cmd_serve, NULL, NULL},
    {":set", "KEY VALUE", "change and save a setting",
     "Settings persist in the catalog and apply to this session and to later interactive "
     "sessions. Scripts (-c, -f, piped commands) and serve start from the defaults, so that "
     "they print the same on every machine, unless given --saved-settings; an interactive "
     "session starts from the defaults with --no-saved-settings. What wins: an option of the "
     "command (--width 5), then :set in this session, then the saved setting, then the "
     "default. :timer and :format change this session only. See :show for the keys.",
     no_opts, NULL, ":set width 40", cmd_set, NULL, NULL},
    {":show", "[KEY]", "show settings", "Shows every setting (or one) with its value and meaning.",
     no_opts, NULL, ":show", cmd_show, NULL, NULL},
    {":timer", "on|off", "show the time of each command",
     "Prints the time spent in the engine after each command, in this session only (:set timer on also saves it "
     "for later interactive sessions).", no_opts, NULL, ":timer on", cmd_timer, NULL, NULL},
    {":format", "table|json", "output format",
     "table is for people; json prints one JSON object per command (same as --json). It changes this session "
     "only (:set format json also saves it for later interactive sessions).",
     no_opts, NULL, ":format json", cmd_format, NULL, NULL},
    {":help", "[COMMAND]", "list commands or explain one", "Without COMMAND lists all commands.",
     no_opts, NULL, ":help count", cmd_help, NULL, NULL},
    {":quit", "", "leave the shell", "Ctrl-D also quits.", no_opts, NULL, NULL, cmd_quit, NULL, NULL},
};
const size_t sh_ncmds = sizeof sh_cmds / sizeof sh_cmds[0];

/* Prints text wrapped at 78 columns: the first line after `first` (already printed,
 * `col` wide), the others indented by `indent` spaces. */
static void wrap(FILE *f, const char *h, int col, int indent)
{
    int width = 78 - col;
    while (*h) {
        int n = 0, last = 0;
        while (h[n] && n < width) {
            if (h[n] == ' ')
                last = n;
            n++;
        }
        if (h[n] && last)
            n = last;
        fprintf(f, "%.*s\n", n, h);
        h += n;
        while (*h == ' ')
            h++;
        if (*h)
            fprintf(f, "%*s", indent, "");
        width = 78 - indent;
    }
}

void sh_print_usage(shell *sh, const sh_cmd *c, FILE *f)
{
    (void)sh;
    fprintf(f, "%s %s\n    %s\n\n    ", c->name, c->args, c->summary);
    wrap(f, c->help, 4, 4);
    if (sh_cmd_opts(c) && sh_cmd_opts(c)[0].name) {
        fputs("\n", f);
        for (const sh_opt *o = sh_cmd_opts(c); o->name; o++) {
            char left[64];
            snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
            int w = fprintf(f, "    %-22s ", left);
            wrap(f, o->help, w, 4 + 23);
        }
    }
    if (c->example)
        fprintf(f, "\n    example: %s\n", c->example);
}

static const char *program_opts[][2] = {
    {"--home DIR", "home directory (catalog, indexes, history); default $INFINIGRAM_HOME, else $XDG_DATA_HOME/infinigram, else ~/.local/share/infinigram"},
    {"-d, --dataset NAME", "load dataset NAME before running commands"},
    {"--json", "print one JSON object per command (JSON Lines)"},
    {"--bail", "stop at the first failing command"},
    {"--saved-settings", "apply the settings saved with :set to -c, -f, piped commands and serve (which start from the defaults otherwise)"},
    {"--no-saved-settings", "start an interactive session from the defaults too"},
    {"-c COMMAND", "run COMMAND (repeatable; in order)"},
    {"-f SCRIPT", "run the commands in SCRIPT ('-' for stdin)"},
    {"--version", "print version numbers and exit"},
    {"--help", "print this help and exit"},
    {"--list-datasets", "print the catalog's dataset names, one per line, and exit (for scripts and completion)"},
    {"--help-dump=man|bash", "print the man page's COMMANDS section (roff), or the bash completion script, and exit"},
};

void sh_program_option_words(FILE *f)
{
    const char *sep = "";
    for (size_t i = 0; i < sizeof program_opts / sizeof program_opts[0]; i++) {
        /* "-d, --dataset NAME" gives -d and --dataset; "--help-dump=man|bash" gives --help-dump= */
        const char *p = program_opts[i][0];
        while (*p) {
            size_t n = strcspn(p, " ,");
            if (*p == '-') {
                const char *eq = memchr(p, '=', n);
                fprintf(f, "%s%.*s", sep, (int)(eq ? (size_t)(eq - p) + 1 : n), p);
                sep = " ";
            }
            p += n;
            p += strspn(p, " ,");
        }
    }
}

void sh_print_program_help(FILE *f)
{
    fputs("usage: infinigram [--home DIR] [-d NAME] [--json] [--bail] [-c COMMAND]... [-f SCRIPT]...\n\n"
          "An exact infini-gram engine and shell: index any UTF-8 corpus, count, and trace\n"
          "every answer back to corpus positions. Without -c/-f and with a terminal on stdin,\n"
          "starts the interactive shell; otherwise runs the commands and exits (status 1 if\n"
          "any command failed, 2 for bad program arguments).\n\noptions:\n", f);
    for (size_t i = 0; i < sizeof program_opts / sizeof program_opts[0]; i++)
        fprintf(f, "  %-20s %s\n", program_opts[i][0], program_opts[i][1]);
    fputs("\ncommands (a unique prefix names one; \"infinigram COMMAND --help\", or COMMAND --help\n"
          "in the shell, shows one's help):\n", f);
    for (size_t i = 0; i < sh_ncmds; i++)
        fprintf(f, "  %-10s %s\n", sh_cmds[i].name, sh_cmds[i].summary);
}

/* roff needs leading dots/quotes and backslashes escaped */
static void roff(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"')
            fputs("\\(dq", f);
        else if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

/* One field as the HTTP reference shows it: "name" (type, range, default): help. */
static void man_field(FILE *f, const ig_field *x)
{
    char range[96] = "";
    if (x->type == IG_FIELD_INT || x->type == IG_FIELD_UINT || x->type == IG_FIELD_DOUBLE || x->type == IG_FIELD_SIZE)
        snprintf(range, sizeof range, ", %.15g to %.15g", x->min, x->max);
    if (x->choices) {
        size_t o = 0;
        for (size_t k = 0; x->choices[k] && o < sizeof range; k++)
            o += (size_t)snprintf(range + o, sizeof range - o, "%s%s", k ? ", " : ": ", x->choices[k]);
    }
    fputs(".TP\n.B \"", f);
    roff(f, x->name);
    fprintf(f, "\"\n(%s", x->choices ? "string" : ig_field_type_name(x));
    roff(f, range);
    if (x->def) {
        fputs(", default ", f);
        roff(f, x->def);
    }
    fputs(x->flags & IG_FIELD_REQUIRED ? ", required) " : ") ", f);
    roff(f, x->help);
    fputs("\n", f);
}

/* The HTTP API section: every endpoint's fields, from the tables the server's codec reads. */
static void man_http(FILE *f)
{
    fputs(".SH HTTP API\n"
          "The server started by \\fBserve\\fR answers GET /v1 (this reference as JSON), /v1/health, "
          "/v1/datasets (each dataset's name, status, bytes, documents, shards and build time; \"casefold\": "
          "true for a case-folded one; \"members\" and \"minus\" for a composition), /v1/models and "
          "/v1/models/NAME (one, as OpenAI's retrieve answers it; 404 for a name not served), and POST "
          "requests whose body is a JSON object: \"dataset\" names the "
          "dataset (optional when one is served), the other members are the fields below (a field's shell "
          "option is its name with dashes), and \"queries\": [...] runs a batch (at most 1000 queries, answered in at most 512 MiB). Strings are exact bytes "
          "(\"\\\\u0000\" is a NUL byte); an unknown member, a value of the wrong type or out of range, an "
          "invalid escape or a lone surrogate is a 400 naming the field; a body nested more than 64 deep, or "
          "whose values would take more than 32 times its size and 4 MiB to read (350,000 empty objects in "
          "1 MB), is a 400 before it is read. Errors are "
          "{\"error\": {\"message\", \"type\", \"code\"}} with status 400, 403, 404, 405, 408, 409, 413, 414, "
          "431, 500, 501 or 503 (403: a request naming a host other than the loopback of a server listening there, "
          "or sent by a browser page of another origin, against DNS rebinding and cross-site posts; 400: an HTTP/1.1 request "
          "without a Host header); only requests that are not well-formed HTTP (a malformed request line, header or chunk, an "
          "unsupported version) or whose head does not fit libmicrohttpd's 256 KiB buffer (thousands of small "
          "headers take more of it than their bytes) get libmicrohttpd's own HTML page (400, 413, 431 or 505), "
          "which it sends without calling the server; bytes it does not take for a request line (control bytes in "
          "it, or no line end) wait for --timeout and get a 408. Two Host headers, Content-Length headers that disagree, or Transfer-Encoding "
          "with Content-Length are a 400, and a Transfer-Encoding other than chunked a 501, before the body is "
          "read (the connection is then closed); a request that waits for 100 Continue with a Content-Length "
          "over the body limit is answered 413 at once. A 503 for a request stopped at its deadline says x-should-retry: false "
          "(OpenAI's client libraries would send it again). The server never opens a path a request names. "
          "Answers are the JSON the shell's --json prints, without \"command\" (the path names it); a text that is not valid UTF-8 or holds a NUL byte (a query, a document's "
          "text, a symbol) comes as lowercase hex of its bytes under its key with _hex appended (query_hex, "
          "text_hex, bytes_hex), since a JSON string cannot carry it.\n",
          f);
    for (const ig_op *const *op = ig_ops(); *op; op++) {
        fprintf(f, ".SS POST /v1/%s\n", (*op)->name);
        for (const ig_field *x = (*op)->fields; x->name; x++)
            if (!(x->flags & IG_FIELD_SHELL))
                man_field(f, x);
    }
    fputs(".SS POST /v1/completions\n"
          "OpenAI-compatible: \"prompt\" (a string or a list of 1 to 64 strings) and the fields:\n",
          f);
    for (const ig_field *x = srv_completion_fields; x->name; x++)
        man_field(f, x);
    fputs(".SS POST /v1/chat/completions\n"
          "OpenAI-compatible: \"messages\" (a list of {\"role\", \"content\"}, joined as \"role: content\" "
          "lines followed by \"assistant: \"; a content is a string, a list of text parts "
          "{\"type\": \"text\", \"text\"} or null) and the fields:\n",
          f);
    for (const ig_field *x = srv_chat_fields; x->name; x++)
        man_field(f, x);
    fputs(".PP\nAccepted and ignored, so that OpenAI clients keep working:", f);
    for (size_t k = 0; srv_openai_ignored[k]; k++) {
        fputs(k ? ", " : " ", f);
        roff(f, srv_openai_ignored[k]);
    }
    fputs(". With \"stream\": true, \"stream_options\": {\"include_usage\": true} adds a last chunk "
          "before [DONE] with empty choices and the usage (characters, as in an answer not streamed).\n", f);
}

void sh_dump_man(FILE *f)
{
    fputs(".SH OPTIONS\n", f);
    for (size_t i = 0; i < sizeof program_opts / sizeof program_opts[0]; i++) {
        fputs(".TP\n.B ", f);
        roff(f, program_opts[i][0]);
        fputs("\n", f);
        roff(f, program_opts[i][1]);
        fputs("\n", f);
    }
    fputs(".SH COMMANDS\n", f);
    for (size_t i = 0; i < sh_ncmds; i++) {
        const sh_cmd *c = &sh_cmds[i];
        fputs(".TP\n.B ", f);
        roff(f, c->name);
        fputs(" ", f);
        roff(f, c->args);
        fputs("\n", f);
        roff(f, c->summary);
        fputs(".\n", f);
        roff(f, c->help);
        fputs("\n", f);
        for (const sh_opt *o = sh_cmd_opts(c); o && o->name; o++) {
            fputs(".RS\n.TP\n.B \\-\\-", f);
            roff(f, o->name);
            if (o->arg) {
                fputs(" ", f);
                roff(f, o->arg);
            }
            fputs("\n", f);
            roff(f, o->help);
            fputs("\n.RE\n", f);
        }
        if (c->example) {
            fputs(".RS\nExample:\n.B ", f);
            roff(f, c->example);
            fputs("\n.RE\n", f);
        }
    }
    man_http(f);
}
