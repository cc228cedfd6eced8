/*
 * Ingestion end to end on temporary files: formats (text, lines, jsonl) with names and
 * source lines, byte ranges (bytes, fractional percentages, errors), directory walks
 * (order, hidden entries, symlinks, skips versus strict errors versus lossy repair),
 * messages naming file and offset, NFC on and off, cancel, inline text and source
 * fingerprints. Every document reaching the sink is recorded and compared byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "text/ingest.h"

static char root[64];

/* Documents as "name|line|text\n" so whole ingestions compare as one string. */
typedef struct recorder {
    ig_buf log;
    int fail_at;     ///< 1-based document at which the sink fails, 0 never
    int seen;
} recorder;

static int rec_sink(void *ctx, const char *name, uint64_t line, const uint8_t *text,
                    size_t len, ig_error *err)
{
    recorder *r = ctx;
    if (++r->seen == r->fail_at)
        return ig_error_set(err, IG_EIO, "sink full");
    char head[512];
    int n = snprintf(head, sizeof head, "%s|%llu|", name, (unsigned long long)line);
    ig_buf_append(&r->log, head, (size_t)n);
    ig_buf_append(&r->log, text, len);
    ig_buf_append(&r->log, "\n", 1);
    return 0;
}

static int log_is(const recorder *r, const char *want, size_t n)
{
    return r->log.len == n && (n == 0 || memcmp(r->log.data, want, n) == 0);
}
#define LOG_IS(r, lit) log_is((r), (lit), sizeof(lit) - 1)

static char *pathf(const char *rel)
{
    return igi_path_join(root, rel);
}

static void write_bytes(const char *rel, const void *p, size_t n)
{
    char *path = pathf(rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    igi_mkdir_p(path, NULL);
    *slash = '/';
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    free(path);
}
#define WRITE(rel, lit) write_bytes((rel), (lit), sizeof(lit) - 1)

/* Reads root/rel as a file named directly (walk = 0) or found in a walk. */
static int read_one(const char *rel, int walk, const ig_ingest_options *o, recorder *rec,
                    ig_ingest_stats *st, ig_error *err)
{
    char *path = pathf(rel);
    ig_ingest_file f = {.path = path, .size = 0, .in_walk = walk};
    ig_error_clear(err);
    int rc = igi_ingest_file_read(&f, o, rec_sink, rec, st, NULL, err);
    free(path);
    return rc;
}

static int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

static void test_formats(void)
{
    ig_ingest_options o;
    ig_ingest_stats st = {0};
    ig_error err;
    char want[1024];
    char *p;

    ig_ingest_options_default(&o);
    CHECK(o.format == IG_FORMAT_TEXT && strcmp(o.field, "text") == 0 && o.normalize == 1 &&
          !o.lossy && !o.strict && !o.has_range, "defaults");

    WRITE("f/a.txt", "hello\nworld\n");
    recorder r = {0};
    CHECK(read_one("f/a.txt", 0, &o, &r, &st, &err) == 0, "text: %s", err.msg);
    p = pathf("f/a.txt");
    snprintf(want, sizeof want, "%s|0|hello\nworld\n\n", p);
    CHECK(log_is(&r, want, strlen(want)), "text doc: %.*s", (int)r.log.len, r.log.data);
    CHECK(st.documents == 1 && st.source_bytes == 12, "stats %llu %llu",
          (unsigned long long)st.documents, (unsigned long long)st.source_bytes);
    free(p);
    ig_buf_free(&r.log);

    o.format = IG_FORMAT_LINES;
    WRITE("f/l.txt", "one\r\n\ntwo\n\r\n  \nthree");
    r = (recorder){0};
    CHECK(read_one("f/l.txt", 0, &o, &r, &st, &err) == 0, "lines: %s", err.msg);
    p = pathf("f/l.txt");
    snprintf(want, sizeof want, "%s|1|one\n%s|3|two\n%s|5|  \n%s|6|three\n", p, p, p, p);
    CHECK(log_is(&r, want, strlen(want)), "lines docs: %.*s", (int)r.log.len, r.log.data);
    CHECK(st.documents == 5, "documents %llu", (unsigned long long)st.documents);
    free(p);
    ig_buf_free(&r.log);

    o.format = IG_FORMAT_JSONL;
    WRITE("f/j.jsonl", "{\"text\":\"a\\u00e9\\n\"}\n\n{\"text\":\"\"}\n  \n"
                       "{\"id\":1,\"text\":\"b\\\\u0000\"}  \r\n");
    r = (recorder){0};
    CHECK(read_one("f/j.jsonl", 0, &o, &r, &st, &err) == 0, "jsonl: %s", err.msg);
    p = pathf("f/j.jsonl");
    snprintf(want, sizeof want, "%s|1|a\xC3\xA9\n\n%s|5|b\\u0000\n", p, p);
    CHECK(log_is(&r, want, strlen(want)), "jsonl docs: %.*s", (int)r.log.len, r.log.data);
    free(p);
    ig_buf_free(&r.log);

    o.field = "body";
    WRITE("f/k.jsonl", "{\"body\":\"x\",\"text\":1}\n");
    r = (recorder){0};
    CHECK(read_one("f/k.jsonl", 0, &o, &r, &st, &err) == 0, "jsonl field: %s", err.msg);
    CHECK(r.log.len > 4 && memcmp(r.log.data + r.log.len - 5, "|1|x\n", 5) == 0, "field body");
    ig_buf_free(&r.log);
    o.field = NULL;   /* NULL means "text" */
    r = (recorder){0};
    CHECK(read_one("f/k.jsonl", 0, &o, &r, &st, &err) == IG_EINVAL, "number field");
    CHECK(has(err.msg, "k.jsonl:1: field \"text\" missing or not a string"), "msg: %s", err.msg);
    CHECK(r.log.len == 0, "nothing emitted");

    static const struct { const char *data, *msg; } bad[] = {
        {"{\"text\":\"a\"}\n{\"text\":\"b\"\n", "j2.jsonl:2: invalid JSON at byte offset 23"},
        {"{\"text\":\"a\"} x\n", "j2.jsonl:1: invalid JSON at byte offset 13"},
        {"\n\n{\"tex\":\"a\"}\n", "j2.jsonl:3: field \"text\" missing or not a string"},
        {"[\"text\"]\n", "j2.jsonl:1: field \"text\" missing or not a string"},
        {"{\"text\":null}\n", "j2.jsonl:1: field \"text\" missing or not a string"},
        {"{\"text\":\"\\ud800\"}\n", "j2.jsonl:1: invalid JSON at byte offset 15: invalid Unicode '\\uD800'"},
        {"{\"text\":\"bad \\uZZZZ more\"}\n", "j2.jsonl:1: invalid JSON at byte offset 15: invalid escape"},
        {"{\"text\":\"a\",\"text\":\"b\"}\n", "j2.jsonl:1: invalid JSON at byte offset 17: duplicate object key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_bytes("f/j2.jsonl", bad[i].data, strlen(bad[i].data));
        r = (recorder){0};
        CHECK(read_one("f/j2.jsonl", 0, &o, &r, &st, &err) == IG_EINVAL, "bad jsonl %zu", i);
        CHECK(has(err.msg, bad[i].msg) && has(err.msg, root), "bad jsonl %zu: %s", i, err.msg);
        CHECK(r.log.len == 0, "bad jsonl %zu: nothing emitted", i);
        ig_buf_free(&r.log);
    }
    /* \u0000 is a NUL byte of the document (NUL is text), never a cut */
    write_bytes("f/j3.jsonl", "{\"text\":\"a\\u0000b c\"}\n", 21);
    r = (recorder){0};
    CHECK(read_one("f/j3.jsonl", 0, &o, &r, &st, &err) == 0, "NUL escape: %s", err.msg);
    CHECK(r.log.len >= 6 && memmem(r.log.data, r.log.len, "|a\0b c\n", 7) != NULL, "NUL kept in the text");
    ig_buf_free(&r.log);
    /* In a walk the whole file is skipped, including its good first record. */
    write_bytes("f/j2.jsonl", bad[0].data, strlen(bad[0].data));
    ig_ingest_stats st2 = {0};
    r = (recorder){0};
    CHECK(read_one("f/j2.jsonl", 1, &o, &r, &st2, &err) == 0, "walk jsonl: %s", err.msg);
    CHECK(r.log.len == 0 && st2.documents == 0, "walk jsonl: nothing emitted");
    CHECK(st2.nskipped == 1 && has(st2.skipped[0].path, "f/j2.jsonl") &&
          has(st2.skipped[0].reason, "invalid JSON at byte offset 23: '}' expected"),
          "walk jsonl skip: %s", st2.nskipped ? st2.skipped[0].reason : "(none)");
    o.strict = 1;
    CHECK(read_one("f/j2.jsonl", 1, &o, &r, &st2, &err) == IG_EINVAL &&
          has(err.msg, "j2.jsonl:2: invalid JSON"), "strict walk jsonl: %s", err.msg);
    igi_ingest_stats_free(&st2);
    igi_ingest_stats_free(&st);

    /* Sink errors come back unchanged and stop the file. */
    o = (ig_ingest_options){0};
    ig_ingest_options_default(&o);
    o.format = IG_FORMAT_LINES;
    r = (recorder){.fail_at = 2};
    CHECK(read_one("f/l.txt", 0, &o, &r, NULL, &err) == IG_EIO && strcmp(err.msg, "sink full") == 0,
          "sink error: %s", err.msg);
    CHECK(r.seen == 2, "stopped at the failing document (%d)", r.seen);
    ig_buf_free(&r.log);

    volatile sig_atomic_t stop = 1;
    char *path = pathf("f/l.txt");
    ig_ingest_file f = {.path = path};
    r = (recorder){0};
    CHECK(igi_ingest_file_read(&f, &o, rec_sink, &r, NULL, &stop, &err) == IG_ECANCELLED &&
          strcmp(err.msg, "cancelled") == 0 && r.seen == 0, "cancel: %s", err.msg);
    free(path);
}

static void test_ranges(void)
{
    ig_byte_range br;
    ig_error err;
    uint64_t a, b;

    CHECK(ig_byte_range_parse("10:20", &br, &err) == 0 && br.start.kind == 1 &&
          br.start.value == 10 && br.end.kind == 1 && br.end.value == 20, "10:20");
    CHECK(ig_byte_range_parse(":", &br, &err) == 0 && br.start.kind == 0 && br.end.kind == 0, ":");
    CHECK(ig_byte_range_parse("12.5%:", &br, &err) == 0 && br.start.kind == 2 &&
          br.start.value == 12.5 && br.end.kind == 0, "12.5%%:");
    CHECK(ig_byte_range_parse(":100%", &br, &err) == 0 && br.end.kind == 2 && br.end.value == 100, ":100%%");
    static const char *bad[] = {"", "abc", "5", "1:2:3", "-1:3", "1e3:", "101%:", "%:",
                                "1.5:", " 1:2", "1:2x", "1..2%:", ".%:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char q[32];
        ig_error_clear(&err);
        snprintf(q, sizeof q, "\"%s\"", bad[i]);
        CHECK(ig_byte_range_parse(bad[i], &br, &err) == IG_EUSAGE && err.code == IG_EUSAGE &&
              has(err.msg, q), "bad range %s: %s", bad[i], err.msg);
    }

    ig_byte_range_parse("33.3%:66.7%", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 1000, &a, &b, &err) == 0 && a == 333 && b == 667,
          "33.3%%:66.7%% of 1000 = %llu:%llu", (unsigned long long)a, (unsigned long long)b);
    ig_byte_range_parse("0.1%:", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 999, &a, &b, &err) == 0 && a == 0 && b == 999, "0.1%% of 999");
    CHECK(ig_byte_range_resolve(&br, 1000, &a, &b, &err) == 0 && a == 1, "0.1%% of 1000");
    ig_byte_range_parse(":", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 77, &a, &b, &err) == 0 && a == 0 && b == 77, ":");
    ig_byte_range_parse("10:5000", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 100, &a, &b, &err) == IG_EUSAGE &&
          strcmp(err.msg, "range 10:5000 is outside the file (100 bytes)") == 0, "%s", err.msg);
    ig_byte_range_parse("50:10", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 100, &a, &b, &err) == IG_EUSAGE && has(err.msg, "50:10"),
          "backwards: %s", err.msg);
    ig_byte_range_parse("60%:40%", &br, &err);
    CHECK(ig_byte_range_resolve(&br, 100, &a, &b, &err) == IG_EUSAGE, "backwards %%");

    /* Ranges on files. */
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    o.has_range = 1;
    recorder r = {0};
    WRITE("r/digits.txt", "0123456789abcdef");
    static const struct { const char *range; const char *doc; } ok[] = {
        {"2:5", "234"}, {"50%:", "89abcdef"}, {"12.5%:25%", "23"}, {":3", "012"},
        {"15:", "f"}, {"0:16", "0123456789abcdef"},
    };
    char *p = pathf("r/digits.txt");
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char want[256];
        ig_byte_range_parse(ok[i].range, &o.range, &err);
        r = (recorder){0};
        CHECK(read_one("r/digits.txt", 0, &o, &r, NULL, &err) == 0, "%s: %s", ok[i].range, err.msg);
        snprintf(want, sizeof want, "%s|0|%s\n", p, ok[i].doc);
        CHECK(log_is(&r, want, strlen(want)), "range %s: %.*s", ok[i].range, (int)r.log.len,
              r.log.data);
        ig_buf_free(&r.log);
    }
    char want[512];
    ig_byte_range_parse("10:5000", &o.range, &err);
    CHECK(read_one("r/digits.txt", 0, &o, &r, NULL, &err) == IG_EUSAGE, "outside");
    snprintf(want, sizeof want, "range 10:5000 is outside %s (16 bytes)", p);
    CHECK(strcmp(err.msg, want) == 0, "outside: %s", err.msg);
    ig_byte_range_parse("5:5", &o.range, &err);
    CHECK(read_one("r/digits.txt", 0, &o, &r, NULL, &err) == IG_EINVAL &&
          has(err.msg, "selects no bytes"), "empty selection: %s", err.msg);
    free(p);

    WRITE("r/u.txt", "a\xC3\xA9 b\n");   /* 'é' occupies bytes 1-2 */
    p = pathf("r/u.txt");
    ig_byte_range_parse("2:", &o.range, &err);
    CHECK(read_one("r/u.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "start inside char");
    snprintf(want, sizeof want, "%s: range start 2 falls inside a UTF-8 character", p);
    CHECK(strcmp(err.msg, want) == 0, "start inside: %s", err.msg);
    ig_byte_range_parse(":2", &o.range, &err);
    CHECK(read_one("r/u.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "end inside char");
    snprintf(want, sizeof want, "%s: range end 2 falls inside a UTF-8 character", p);
    CHECK(strcmp(err.msg, want) == 0, "end inside: %s", err.msg);
    ig_byte_range_parse("1:3", &o.range, &err);
    r = (recorder){0};
    CHECK(read_one("r/u.txt", 0, &o, &r, NULL, &err) == 0, "whole char: %s", err.msg);
    snprintf(want, sizeof want, "%s|0|\xC3\xA9\n", p);
    CHECK(log_is(&r, want, strlen(want)), "1:3 is the character");
    ig_buf_free(&r.log);
    /* In a walk a bad boundary skips the file. */
    ig_ingest_stats st = {0};
    ig_byte_range_parse("2:", &o.range, &err);
    CHECK(read_one("r/u.txt", 1, &o, &r, &st, &err) == 0 && st.nskipped == 1 &&
          strcmp(st.skipped[0].reason, "range start 2 falls inside a UTF-8 character") == 0,
          "walk boundary skip");
    igi_ingest_stats_free(&st);
    free(p);

    /* Offsets in messages are raw file offsets; lines count from the range start. */
    WRITE("r/bad.txt", "abc\nxy\xC3z\n");
    p = pathf("r/bad.txt");
    ig_byte_range_parse("1:", &o.range, &err);
    CHECK(read_one("r/bad.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "invalid after range");
    snprintf(want, sizeof want, "%s: invalid UTF-8 at byte offset 6", p);
    CHECK(strcmp(err.msg, want) == 0, "raw offset: %s", err.msg);
    o.format = IG_FORMAT_LINES;
    CHECK(read_one("r/bad.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "invalid lines");
    snprintf(want, sizeof want, "%s:2: invalid UTF-8 at byte offset 6", p);
    CHECK(strcmp(err.msg, want) == 0, "line and raw offset: %s", err.msg);
    ig_byte_range_parse("4:", &o.range, &err);
    o.lossy = 1;
    r = (recorder){0};
    CHECK(read_one("r/bad.txt", 0, &o, &r, NULL, &err) == 0, "lossy lines: %s", err.msg);
    snprintf(want, sizeof want, "%s|1|xy\xEF\xBF\xBDz\n", p);
    CHECK(log_is(&r, want, strlen(want)), "line numbers from range start: %.*s",
          (int)r.log.len, r.log.data);
    ig_buf_free(&r.log);
    free(p);
}

static void test_validation(void)
{
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    ig_error err;
    recorder r = {0};
    char want[512], *p;
    ig_ingest_stats st = {0};

    /* 1234 ASCII bytes, then a lead byte without its continuation. */
    char big[1300];
    memset(big, 'x', sizeof big);
    big[1234] = (char)0xC3;
    write_bytes("v/x.txt", big, sizeof big);
    p = pathf("v/x.txt");
    CHECK(read_one("v/x.txt", 0, &o, &r, &st, &err) == IG_EINVAL, "named invalid");
    snprintf(want, sizeof want, "%s: invalid UTF-8 at byte offset 1234", p);
    CHECK(strcmp(err.msg, want) == 0, "message: %s", err.msg);
    CHECK(r.log.len == 0, "nothing emitted");
    /* Walk: skipped; strict: error; lossy: repaired. */
    CHECK(read_one("v/x.txt", 1, &o, &r, &st, &err) == 0 && st.nskipped == 1 &&
          strcmp(st.skipped[0].path, p) == 0 &&
          strcmp(st.skipped[0].reason, "invalid UTF-8 at byte offset 1234") == 0, "walk skip");
    o.strict = 1;
    CHECK(read_one("v/x.txt", 1, &o, &r, &st, &err) == IG_EINVAL && strcmp(err.msg, want) == 0,
          "strict: %s", err.msg);
    CHECK(st.nskipped == 1, "strict adds no skip");
    o.strict = 0;
    o.lossy = 1;
    CHECK(read_one("v/x.txt", 1, &o, &r, &st, &err) == 0 && st.replaced == 1 &&
          st.documents == 1, "lossy");
    CHECK(r.log.len == strlen(p) + 3 + 1300 + 2 + 1 &&
          memcmp(r.log.data + strlen(p) + 3 + 1234, "\xEF\xBF\xBDx", 4) == 0, "lossy text");
    ig_buf_free(&r.log);
    o.lossy = 0;
    free(p);

    WRITE("v/ff.txt", "abcdefg\xFFhi");
    p = pathf("v/ff.txt");
    CHECK(read_one("v/ff.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "0xFF");
    snprintf(want, sizeof want, "%s: 0xFF byte at byte offset 7", p);
    CHECK(strcmp(err.msg, want) == 0, "0xFF message: %s", err.msg);
    free(p);

    /* NUL bytes: text when named, binary in the first 8 KiB of a walked file. */
    WRITE("v/nul.bin", "abcde\0fgh");
    p = pathf("v/nul.bin");
    r = (recorder){0};
    CHECK(read_one("v/nul.bin", 0, &o, &r, NULL, &err) == 0, "named NUL: %s", err.msg);
    snprintf(want, sizeof want, "%s|0|abcde", p);
    size_t wl = strlen(want);
    memcpy(want + wl, "\0fgh\n", 5);
    CHECK(log_is(&r, want, wl + 5), "NUL kept");
    ig_buf_free(&r.log);
    CHECK(read_one("v/nul.bin", 1, &o, &r, &st, &err) == 0 && st.nskipped == 2 &&
          strcmp(st.skipped[1].reason, "binary file (NUL byte at offset 5)") == 0,
          "binary skip: %s", st.nskipped > 1 ? st.skipped[1].reason : "");
    o.strict = 1;
    CHECK(read_one("v/nul.bin", 1, &o, &r, &st, &err) == IG_EINVAL &&
          has(err.msg, "binary file (NUL byte at offset 5)") && has(err.msg, p), "strict binary");
    o.strict = 0;
    /* Even with a range, the binary probe looks at the start of the raw file. */
    o.has_range = 1;
    ig_byte_range_parse("6:", &o.range, &err);
    CHECK(read_one("v/nul.bin", 1, &o, &r, &st, &err) == 0 && st.nskipped == 3, "binary with range");
    o.has_range = 0;
    free(p);
    char late[9000];
    memset(late, 'y', sizeof late);
    late[8192] = '\0';
    write_bytes("v/late.txt", late, sizeof late);
    r = (recorder){0};
    CHECK(read_one("v/late.txt", 1, &o, &r, &st, &err) == 0 && st.nskipped == 3 &&
          r.seen == 1, "NUL after 8 KiB is text");
    ig_buf_free(&r.log);

    WRITE("v/empty.txt", "");
    p = pathf("v/empty.txt");
    CHECK(read_one("v/empty.txt", 0, &o, &r, NULL, &err) == IG_EINVAL, "empty named");
    snprintf(want, sizeof want, "%s: empty file", p);
    CHECK(strcmp(err.msg, want) == 0, "empty: %s", err.msg);
    CHECK(read_one("v/empty.txt", 1, &o, &r, &st, &err) == 0 && st.nskipped == 4 &&
          strcmp(st.skipped[3].reason, "empty file") == 0, "empty in walk");
    free(p);

    CHECK(read_one("v/missing.txt", 0, &o, &r, NULL, &err) == IG_ENOTFOUND &&
          has(err.msg, "missing.txt") && has(err.msg, "No such file or directory"),
          "missing: %s", err.msg);
    if (geteuid() != 0) {   /* root reads anything */
        WRITE("v/locked.txt", "secret");
        p = pathf("v/locked.txt");
        chmod(p, 0);
        CHECK(read_one("v/locked.txt", 1, &o, &r, &st, &err) == 0 && st.nskipped == 5 &&
              has(st.skipped[4].reason, "Permission denied"), "unreadable skipped");
        CHECK(read_one("v/locked.txt", 0, &o, &r, &st, &err) == IG_EIO &&
              has(err.msg, "Permission denied"), "unreadable named: %s", err.msg);
        chmod(p, 0644);
        free(p);
    }
    igi_ingest_stats_free(&st);
    CHECK(st.nskipped == 0 && st.skipped == NULL, "stats freed");

    /* NFC on and off. */
    WRITE("v/nfc.txt", "caf" "e\xCC\x81");
    p = pathf("v/nfc.txt");
    r = (recorder){0};
    CHECK(read_one("v/nfc.txt", 0, &o, &r, NULL, &err) == 0, "nfc");
    snprintf(want, sizeof want, "%s|0|caf\xC3\xA9\n", p);
    CHECK(log_is(&r, want, strlen(want)), "NFC applied");
    ig_buf_free(&r.log);
    o.normalize = 0;
    r = (recorder){0};
    CHECK(read_one("v/nfc.txt", 0, &o, &r, NULL, &err) == 0, "no-normalize");
    snprintf(want, sizeof want, "%s|0|cafe\xCC\x81\n", p);
    CHECK(log_is(&r, want, strlen(want)), "bytes kept");
    ig_buf_free(&r.log);
    o.normalize = 1;
    free(p);

    /* Inline text. */
    r = (recorder){0};
    st = (ig_ingest_stats){0};
    CHECK(igi_ingest_inline("ne\xCC\x81", 4, &o, rec_sink, &r, &st, &err) == 0, "inline");
    CHECK(LOG_IS(&r, "<inline>|0|n\xC3\xA9\n") && st.documents == 1 && st.source_bytes == 4,
          "inline doc");
    CHECK(igi_ingest_inline("", 0, &o, rec_sink, &r, &st, &err) == IG_EINVAL &&
          has(err.msg, "<inline>"), "empty inline: %s", err.msg);
    CHECK(igi_ingest_inline("ab\xFF", 3, &o, rec_sink, &r, &st, &err) == IG_EINVAL &&
          strcmp(err.msg, "<inline>: 0xFF byte at byte offset 2") == 0, "inline 0xFF: %s", err.msg);
    o.lossy = 1;
    CHECK(igi_ingest_inline("ab\xFF", 3, &o, rec_sink, &r, &st, &err) == 0 && st.replaced == 1,
          "inline lossy");
    ig_buf_free(&r.log);
    igi_ingest_stats_free(&st);
}

static int list_is(const ig_ingest_file *f, size_t n, const char **want, size_t nw)
{
    if (n != nw)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char *p = pathf(want[i]);
        int ok = strcmp(f[i].path, p) == 0 && f[i].in_walk == 1;
        free(p);
        if (!ok)
            return 0;
    }
    return 1;
}

static void test_walk(void)
{
    ig_error err;
    WRITE("w/b.txt", "b");
    WRITE("w/a/z.txt", "z");
    WRITE("w/a.txt", "a");
    WRITE("w/A.txt", "A");
    WRITE("w/.hidden.txt", "h");
    WRITE("w/.hdir/x.txt", "x");
    WRITE("w/c/d/e.txt", "e");
    WRITE("w/c/.keep", "");
    char *w = pathf("w"), *target = pathf("w/b.txt"), *link = pathf("w/link.txt");
    CHECK(symlink(target, link) == 0, "symlink");
    char *fifo = pathf("w/fifo");
    CHECK(mkfifo(fifo, 0644) == 0, "mkfifo");

    ig_source src[3] = {{.kind = IG_SOURCE_FILE, .path = w},
                        {.kind = IG_SOURCE_INLINE, .text = "t", .text_len = 1},
                        {.kind = IG_SOURCE_FILE, .path = target}};
    ig_ingest_file *files = NULL;
    size_t n = 0;
    CHECK(igi_ingest_list(src, 3, &files, &n, &err) == 0, "list: %s", err.msg);
    static const char *order[] = {"w/A.txt", "w/a/z.txt", "w/a.txt", "w/b.txt", "w/c/d/e.txt"};
    CHECK(list_is(files, n < 5 ? n : 5, order, 5), "walk order (%zu files)", n);
    /* the FIFO and the link are listed as skips, with the reason, in their sorted places */
    CHECK(n == 8 && !strcmp(files[5].path, fifo) && files[5].skip && has(files[5].skip, "not a regular file") &&
          !strcmp(files[6].path, link) && files[6].skip && has(files[6].skip, "symbolic link"),
          "special entries listed as skips");
    CHECK(n == 8 && strcmp(files[7].path, target) == 0 && files[7].in_walk == 0 &&
          files[7].size == 1, "named file last, not in walk");
    for (size_t i = 0; i < n; i++)
        CHECK(files[i].skip || files[i].size == 1, "size of %s", files[i].path);
    igi_ingest_files_free(files, n);

    /* A trailing slash does not double the separator. */
    char *wslash = igi_aprintf("%s/", w);
    ig_source s1 = {.kind = IG_SOURCE_FILE, .path = wslash};
    CHECK(igi_ingest_list(&s1, 1, &files, &n, &err) == 0 && n == 7 &&
          list_is(files, 5, order, 5), "trailing slash");
    igi_ingest_files_free(files, n);
    free(wslash);

    WRITE("e/.only-hidden", "x");
    char *e = pathf("e");
    ig_source s2 = {.kind = IG_SOURCE_FILE, .path = e};
    CHECK(igi_ingest_list(&s2, 1, &files, &n, &err) == IG_EINVAL, "empty dir");
    char want[512];
    snprintf(want, sizeof want, "%s: directory has no files", e);
    CHECK(strcmp(err.msg, want) == 0, "empty dir: %s", err.msg);
    CHECK(files == NULL && n == 0, "nothing returned on error");

    char *missing = pathf("nope");
    ig_source s3[2] = {{.kind = IG_SOURCE_FILE, .path = w}, {.kind = IG_SOURCE_FILE, .path = missing}};
    CHECK(igi_ingest_list(s3, 2, &files, &n, &err) == IG_ENOTFOUND && has(err.msg, missing) &&
          has(err.msg, "No such file or directory"), "missing: %s", err.msg);

    /* Ingest the whole walk: every file one document, in order. */
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    CHECK(igi_ingest_list(src, 1, &files, &n, &err) == 0, "list");
    recorder r = {0};
    ig_ingest_stats st = {0};
    for (size_t i = 0; i < n; i++)
        CHECK(igi_ingest_file_read(&files[i], &o, rec_sink, &r, &st, NULL, &err) == 0, "read");
    CHECK(st.documents == 5 && st.source_bytes == 5 && st.nskipped == 2, "walk stats (the FIFO and the link skipped)");
    /* with strict, a skip is an error naming the entry */
    o.strict = 1;
    CHECK(igi_ingest_file_read(&files[6], &o, rec_sink, &r, &st, NULL, &err) == IG_EINVAL && has(err.msg, link) &&
          has(err.msg, "symbolic link"), "strict: %s", err.msg);
    o.strict = 0;
    CHECK(r.log.len > 0 && r.log.data[r.log.len - 2] == 'e', "last doc is c/d/e.txt");
    ig_buf_free(&r.log);
    igi_ingest_stats_free(&st);
    igi_ingest_files_free(files, n);

    free(w), free(target), free(link), free(fifo), free(e), free(missing);
}

static void set_mtime(const char *rel, long sec)
{
    char *p = pathf(rel);
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    utimensat(AT_FDCWD, p, ts, 0);
    free(p);
}

static void test_fingerprint(void)
{
    ig_error err;
    ig_fingerprint a, b;
    WRITE("fp/one.txt", "12345");
    WRITE("fp/sub/deep/two.txt", "abc");
    WRITE("fp/.git/ignored", "zzzz");
    set_mtime("fp/one.txt", 1000000000);
    set_mtime("fp/sub/deep/two.txt", 1000000000);
    char *d = pathf("fp"), *f = pathf("fp/one.txt");

    CHECK(igi_source_fingerprint(f, 1, &a, &err) == 0 && !a.is_dir && a.size == 5 &&
          a.mtime_ns == 1000000000LL * 1000000000LL && a.tree_hash == 0, "file fingerprint");

    CHECK(igi_source_fingerprint(d, UINT64_MAX, &a, &err) == 0 && a.is_dir && a.size == 8 &&
          a.tree_hash != 0, "deep: size %llu", (unsigned long long)a.size);
    CHECK(igi_source_fingerprint(d, UINT64_MAX, &b, &err) == 0 && b.tree_hash == a.tree_hash, "stable");
    /* a walk of at most `limit` entries (hidden ones are not entries): two files fit in two */
    CHECK(igi_source_fingerprint(d, 2, &b, &err) == 0 && b.walked && b.tree_hash == a.tree_hash, "limit 2 walks");
    CHECK(igi_source_fingerprint(d, 1, &b, &err) == 0 && b.is_dir && !b.walked && !b.tree_hash && !b.size &&
          b.mtime_ns == a.mtime_ns, "limit 1: the directory's own fingerprint");
    CHECK(igi_source_fingerprint(d, 0, &b, &err) == 0 && b.is_dir && !b.walked, "limit 0: shallow");
    set_mtime("fp/sub/deep/two.txt", 1000000001);
    CHECK(igi_source_fingerprint(d, UINT64_MAX, &b, &err) == 0 && b.tree_hash != a.tree_hash &&
          b.size == 8, "nested mtime changes the hash");
    WRITE("fp/sub/deep/two.txt", "abcd");
    set_mtime("fp/sub/deep/two.txt", 1000000000);
    CHECK(igi_source_fingerprint(d, UINT64_MAX, &b, &err) == 0 && b.tree_hash != a.tree_hash &&
          b.size == 9, "nested size changes the hash");
    WRITE("fp/sub/deep/two.txt", "abc");
    set_mtime("fp/sub/deep/two.txt", 1000000000);
    WRITE("fp/.git/ignored", "changed");
    CHECK(igi_source_fingerprint(d, UINT64_MAX, &b, &err) == 0 && b.tree_hash == a.tree_hash,
          "hidden files do not count");

    set_mtime("fp", 1500000000);
    CHECK(igi_source_fingerprint(d, 0, &a, &err) == 0 && a.is_dir && a.size == 0 &&
          a.tree_hash == 0 && a.mtime_ns == 1500000000LL * 1000000000LL, "shallow");
    set_mtime("fp", 1500000002);
    CHECK(igi_source_fingerprint(d, 0, &b, &err) == 0 && b.mtime_ns != a.mtime_ns, "dir mtime");

    char *m = pathf("fp/none");
    CHECK(igi_source_fingerprint(m, 1, &a, &err) == IG_ENOTFOUND && has(err.msg, m), "missing");
    free(d), free(f), free(m);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/ig_ingest_XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    test_formats();
    test_ranges();
    test_validation();
    test_walk();
    test_fingerprint();
    ig_error err;
    if (igi_remove_tree(root, &err) != 0)
        fprintf(stderr, "cleanup: %s\n", err.msg);
    return check_done("test_ingest");
}
