/* Unit tests of the operations' field tables: each table is the one place a default is
 * written, so every default must parse as the codecs parse it, the operation's defaults
 * function must leave every field at the default its row shows, and a row whose default is
 * resolved later must not be applied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "infinigram/fields.h"
#include "infinigram/generate.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/build.h"
#include "infinigram/explain.h"
#include "infinigram/text.h"
#include "infinigram/tokens.h"
#include "util/util.h"

#include <jansson.h>

typedef struct probe_opts {
    uint64_t n;
    double x;
    int on;
} probe_opts;

/* What a C caller may hand the library by mistake, each a crash before (SIGSEGV under ASan):
 * missing options or result, NULL handles, a stop-string count without its array, a range
 * or a byte index where the call wants another kind. Each is an error, or nothing to do. */
static void c_caller_cases(void)
{
    ig_error e = {0};
    ig_op_ctx none = {0};
    ig_count_opts co;
    ig_count_defaults(&co);
    ig_count_result cr;
    CHECK(ig_count_run(&none, NULL, &cr, &e) == IG_EUSAGE, "count without options: %s", e.msg);
    CHECK(ig_count_run(&none, &co, NULL, &e) == IG_EUSAGE, "count without a result: %s", e.msg);
    ig_fields_free(ig_count_fields, NULL);
    ig_generation_clear(NULL);
    ig_index *idx = (ig_index *)&e; /* not NULL: must be set to NULL, not read */
    CHECK(ig_index_open(NULL, "/tmp", &e) == IG_EUSAGE, "open into NULL: %s", e.msg);
    CHECK(ig_index_open(&idx, NULL, &e) == IG_EUSAGE, "open of NULL: %s", e.msg);
    ig_index_info info;
    memset(&info, 0xAB, sizeof info);
    ig_index_get_info(NULL, &info);
    CHECK(info.bytes == 0 && info.documents == 0, "info of no index");
    CHECK(ig_count(NULL, (const uint8_t *)"x", 1) == 0, "count in no index");
    ig_byte_range br = {{7, 3}, {0, 0}};
    uint64_t a, b;
    CHECK(ig_byte_range_resolve(&br, 100, &a, &b, &e) == IG_EUSAGE, "range of kind 7 resolved");
    br = (ig_byte_range){{1, -4}, {0, 0}};
    CHECK(ig_byte_range_resolve(&br, 100, &a, &b, &e) == IG_EUSAGE, "range from byte -4 resolved");
    /* on a small byte index */
    char dir[] = "/tmp/ig-fields-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char *path = malloc(strlen(dir) + 8);
    sprintf(path, "%s/index", dir);
    const char *text = "the cat sat on the mat";
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = strlen(text)};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    idx = NULL;
    CHECK(ig_build_index(path, &src, 1, NULL, &bo, NULL, NULL, NULL, &res, &e) == 0 && ig_index_open(&idx, path, &e) == 0,
          "build: %s", e.msg);
    if (idx) {
        ig_build_result_free(&res);
        ig_gen_options go;
        ig_gen_options_default(&go);
        go.nstop = 3; /* and no array */
        ig_gen *g = NULL;
        CHECK(ig_gen_start(&g, idx, &go, (const uint8_t *)"the", 3, &e) == IG_EUSAGE && !g, "3 stops, no array: %s",
              e.msg);
        const char *stops[2] = {"x", NULL};
        go.stop = stops;
        go.nstop = 2;
        CHECK(ig_gen_start(&g, idx, &go, (const uint8_t *)"the", 3, &e) == IG_EUSAGE && !g, "a NULL stop: %s", e.msg);
        ig_range r = {0, 0};
        ig_token_count *tc = NULL;
        size_t n = 0;
        CHECK(ig_token_next(idx, &r, 0, &tc, &n, &e) == IG_EUSAGE && !tc && !n, "token next on bytes: %s", e.msg);
        ig_index_close(&idx);
    }
    igi_remove_tree(dir, &e);
    free(path);
}


/* The command-line reader and codec every face that reads a typed line shares. */
static int read_fill(const char *line, const ig_field *fields, ig_line *l, void *opts, ig_line_fill *fill, ig_error *e)
{
    int rc = ig_line_read(line, 0, ig_fields_lookup, fields, "count", l, e);
    return rc ? rc : ig_fields_from_line(fields, l, opts, fill, e);
}

static void line_cases(void)
{
    ig_count_opts o;
    ig_line l;
    ig_line_fill fill;
    ig_error e;
    const ig_field *F = ig_count_fields;
    ig_count_defaults(&o);
    CHECK(read_fill("count --positions=3 the  cat --width 7", F, &l, &o, &fill, &e) == 0, "%s", e.msg);
    CHECK(o.positions == 3 && o.width == 7 && o.query.n == 7 && !memcmp(o.query.p, "the cat", 7), "filled");
    CHECK(fill.given == ((1u << 0) | (1u << 2) | (1u << 3)), "given %llx", (unsigned long long)fill.given);
    CHECK(l.nopts == 2 && l.opts[0].value.col == 18 && l.nargs == 2 && l.args[1].col == 25, "places");
    CHECK(!strcmp(l.opts[0].typed, "positions") && !strcmp(l.opts[0].value.text, "3"), "--positions=3 typed: %s",
          l.opts[0].typed);
    CHECK(l.words[1].len == 13 && !memchr(l.words[1].text, 0, l.words[1].len), "the words stay as read");
    ig_line_free(&l);
    ig_fields_free(F, &o);

    ig_count_defaults(&o);
    CHECK(read_fill("count -- --positions", F, &l, &o, &fill, &e) == 0, "%s", e.msg);
    CHECK(o.query.n == 11 && !memcmp(o.query.p, "--positions", 11) && o.positions == 0, "-- ends the options");
    ig_line_free(&l);
    ig_fields_free(F, &o);

    struct {
        const char *line, *msg;
        size_t col;
        int unknown, missing, extra;
    } bad[] = {
        {"count --bogus x", "unknown option --bogus for count", 6, 1, 0, 0},
        {"count --Positions 2 x", "unknown option --Positions for count", 6, 1, 0, 0},
        {"count x --positions", "option --positions needs a value (K)", 8, 0, 0, 0},
        {"count --positions -1 x", "--positions: ", 18, 0, 0, 0},
        {"count --width=10001 x", "--width: ", 14, 0, 0, 0},
        {"count", "missing TEXT", 0, 0, 1, 0},
        {"count \"a\" \"b\"", "TEXT is one quoted text or plain words", 10, 0, 0, 0},
        {"count \"a", "unterminated quote", 6, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ig_count_defaults(&o);
        e.msg[0] = '\0';
        int rc = read_fill(bad[i].line, F, &l, &o, &fill, &e);
        size_t col = l.errcol ? l.errcol : fill.errcol;
        CHECK(rc == IG_EUSAGE && !strncmp(e.msg, bad[i].msg, strlen(bad[i].msg)), "%s: %d %s", bad[i].line, rc, e.msg);
        CHECK(col == bad[i].col && l.unknown == bad[i].unknown && fill.missing == bad[i].missing,
              "%s: column %zu, unknown %d, missing %d", bad[i].line, col, l.unknown, fill.missing);
        ig_line_free(&l);
        ig_fields_free(F, &o);
    }
    /* a field only JSON offers, or a positional one, is no option; a dash never an underscore */
    const ig_field *pf = ig_op_find("generate")->fields;
    const char *canon, *arg;
    CHECK(ig_fields_lookup(pf, "top-k", 5, &canon, &arg) == 1 && !strcmp(canon, "top_k"), "--top-k");
    CHECK(ig_fields_lookup(pf, "top_k", 5, &canon, &arg) == -1, "--top_k taken");
    CHECK(ig_fields_lookup(F, "query", 5, &canon, &arg) == -1, "a positional field as an option");
    /* a switch takes no value; --help asks for help and sets nothing */
    const ig_field *sw = NULL;
    const ig_op *sop = NULL;
    for (const ig_op *const *p = ig_ops(); *p && !sw; p++)
        for (const ig_field *f = (*p)->fields; f->name && !sw; f++)
            if (f->type == IG_FIELD_BOOL && !(f->flags & (IG_FIELD_POSITIONAL | IG_FIELD_HTTP)) && !strchr(f->name, '_'))
                sw = f, sop = *p;
    CHECK(sw != NULL, "no switch in any table");
    if (sw) {
        char line[128];
        snprintf(line, sizeof line, "%s --%s=1", sop->name, sw->name);
        CHECK(ig_line_read(line, 0, ig_fields_lookup, sop->fields, sop->name, &l, &e) == IG_EUSAGE &&
                  strstr(e.msg, "takes no value"), "%s: %s", line, e.msg);
        ig_line_free(&l);
    }
    CHECK(ig_line_read("count --help x", 0, ig_fields_lookup, F, "count", &l, &e) == 0 && l.help && !l.nopts, "--help");
    ig_line_free(&l);
    /* a text in single quotes, as most shells quote: the quotes are text, and the codec says so */
    ig_count_defaults(&o);
    CHECK(read_fill("count 'the cat'", F, &l, &o, &fill, &e) == 0 && fill.single_quoted == &F[0], "single quotes");
    ig_line_free(&l);
    ig_fields_free(F, &o);
    ig_count_defaults(&o);
    CHECK(read_fill("count \"'the cat'\"", F, &l, &o, &fill, &e) == 0 && !fill.single_quoted, "quoted single quotes");
    ig_line_free(&l);
    ig_fields_free(F, &o);
    ig_line_free(NULL);
    /* no error struct: the codec still fails cleanly */
    ig_count_defaults(&o);
    CHECK(ig_line_read("count --positions abc x", 0, ig_fields_lookup, F, "count", &l, NULL) == 0 &&
              ig_fields_from_line(F, &l, &o, &fill, NULL) == IG_EUSAGE && fill.field == &F[2],
          "a bad value without an error struct");
    ig_line_free(&l);
    ig_fields_free(F, &o);
    /* the program-own options' values */
    long long n = 0;
    uint64_t sz = 0;
    CHECK(ig_option_int("jobs", "4", 1, 64, &n, &e) == 0 && n == 4, "--jobs 4");
    CHECK(ig_option_int("jobs", "0", 1, 64, &n, &e) == IG_EUSAGE && strstr(e.msg, "--jobs: 0 is out of range"), "%s", e.msg);
    CHECK(ig_option_int("jobs", " 5", 1, 64, &n, &e) == IG_EUSAGE && strstr(e.msg, "not an integer"), "%s", e.msg);
    CHECK(ig_option_size("memory", "64M", &sz, &e) == 0 && sz == 64u << 20, "--memory 64M");
    CHECK(ig_option_size("memory", "lots", &sz, &e) == IG_EUSAGE && strstr(e.msg, "--memory: not a size"), "%s", e.msg);
    static const ig_option own[] = {{"jobs", "N", NULL}, {"lcp", NULL, NULL}, {NULL, NULL, NULL}};
    CHECK(ig_options_lookup(own, "jobs", 4, &canon, &arg) == 1 && ig_options_lookup(own, "lcp", 3, &canon, &arg) == 0 &&
              ig_options_lookup(own, "job", 3, &canon, &arg) == -1, "a program's own options");
    /* words that name things refuse a NUL byte, pointing at its word */
    CHECK(ig_line_read("load \"a\\x00b\"", 0, ig_options_lookup, own, "load", &l, &e) == 0 &&
              ig_line_names(&l, &e) == IG_EUSAGE && l.errcol == 5, "a NUL in a name: %s", e.msg);
    ig_line_free(&l);
    /* -0 is 0 on the command line too (a JSON -0 is) */
    ig_count_defaults(&o);
    o.positions = 5;
    CHECK(read_fill("count --positions -0 x", F, &l, &o, &fill, &e) == 0 && o.positions == 0, "-0: %s", e.msg);
    ig_line_free(&l);
    ig_fields_free(F, &o);
}

/* The JSON codec, as the server and C callers use it: each message names the member as the
 * request spells it, strings keep their exact bytes, and a setting named like a field is its
 * default. */
typedef struct body_case {
    const char *body, *want; /* a request body, and what its error must say */
} body_case;

static json_t *read_json(const char *text, ig_error *e) { return ig_json_read(text, strlen(text), "the body", e); }

static int fill_json(const char *text, const char *const *skip, const char *const *alias, ig_count_opts *o,
                     ig_error *e)
{
    json_t *v = read_json(text, e);
    if (!v)
        return -1;
    ig_fields_free(ig_count_fields, o);
    ig_count_defaults(o);
    int rc = ig_fields_from_json(ig_count_fields, o, v, skip, alias, e);
    json_decref(v);
    return rc;
}

static void json_cases(void)
{
    {
        /* a body is read in memory proportional to its size: 350,000 empty objects in 1 MB
         * would take about 75 MB (refused, saying so); as many bytes of numbers or of text pass */
        size_t n = 349000, o = 0;
        char *b = malloc(3 * n + 2);
        b[o++] = '[';
        for (size_t i = 0; i < n; i++) {
            memcpy(b + o, i ? ",{}" : "{}", i ? 3 : 2);
            o += i ? 3 : 2;
        }
        b[o++] = ']';
        ig_error e0;
        json_t *v = ig_json_read(b, o, "the request body", &e0);
        CHECK(!v && e0.code == IG_EUSAGE && strstr(e0.msg, "too many values"), "empty objects: %s", v ? "read" : e0.msg);
        json_decref(v);
        CHECK(ig_json_cost(b, o) > IG_JSON_COST_MAX(o), "the cost of empty objects");
        for (size_t i = 1; i + 1 < o; i++)
            b[i] = i % 2 ? '1' : ',';
        b[o - 2] = '1';
        v = ig_json_read(b, o, "the request body", &e0);
        CHECK(v && json_array_size(v) == (o - 1) / 2, "numbers: %s", v ? "" : e0.msg);
        json_decref(v);
        free(b);
    }
    ig_error e = {0};
    ig_count_opts o;
    ig_count_defaults(&o);
    static const char *const skip[] = {"dataset", NULL}, *const alias[] = {"context", "query", NULL};
    /* a string is its bytes: \u0000 is a NUL of the query */
    CHECK(fill_json("{\"dataset\":\"d\",\"query\":\"a\\u0000b\",\"positions\":3}", skip, NULL, &o, &e) == 0 &&
              o.query.n == 3 && !memcmp(o.query.p, "a\0b", 3) && o.positions == 3,
          "NUL in a string: %s", e.msg);
    CHECK(fill_json("{\"context\":\"xy\"}", NULL, alias, &o, &e) == 0 && o.query.n == 2, "alias: %s", e.msg);
    CHECK(fill_json("{\"context\":\"xy\",\"query\":\"z\"}", NULL, alias, &o, &e) == IG_EUSAGE &&
              strstr(e.msg, "given twice"), "alias and name: %s", e.msg);
    CHECK(fill_json("{\"query\":\"x\",\"positions\":null}", NULL, NULL, &o, &e) == 0 && o.positions == 0,
          "null is the default: %s", e.msg);
    /* each mistake names the member */
    static const body_case bad[] = {
        {"{\"query\":\"x\",\"dataset\":\"d\"}", "unknown field \"dataset\""},
        {"{\"query\":\"x\",\"positions\":-1}", "\"positions\": -1 is out of range"},
        {"{\"query\":\"x\",\"positions\":1.5}", "\"positions\""},
        {"{\"query\":\"x\",\"positions\":\"3\"}", "\"positions\": expected integer, not a string"},
        {"{\"query\":\"x\",\"positions\":true}", "\"positions\": expected integer, not true"},
        {"{\"query\":\"x\",\"positions\":1e300}", "\"positions\""},
        {"{\"query\":7}", "\"query\": expected string, not an integer"},
        {"{\"positions\":1}", "\"query\" is required"},
        {"{\"query\":\"x\",\"width 5 \\\"zzz\\\" --positions\":1}", "unknown field \"width 5 \"zzz\" --positions\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = fill_json(bad[i].body, NULL, NULL, &o, &e);
        CHECK(rc == IG_EUSAGE && strstr(e.msg, bad[i].want), "%s: rc %d, %s (wanted %s)", bad[i].body, rc, e.msg,
              bad[i].want);
    }
    /* a body that does not parse: where, and in which member */
    static const body_case broken[] = {
        {"{\"query\":\"abc\\uZZZZdef\"}", "the body is not valid JSON: \"query\": "},
        {"{\"query\":\"\\ud800\"}", "\"query\": "},
        {"{\"query\":\"x\",\"query\":\"y\"}", "\"query\": given twice"},
        {"{\"qu\\x\":1}", "in a key"},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "nested more than 64 deep (byte 64)"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        json_t *v = read_json(broken[i].body, &e);
        CHECK(!v && e.code == IG_EINVAL && strstr(e.msg, broken[i].want), "%s: %s (wanted %s)", broken[i].body,
              v ? "parsed" : e.msg, broken[i].want);
        json_decref(v);
    }
    /* integers exact to 2^63; one past it is read as a number, refused by the range check */
    json_t *v = read_json("{\"query\":\"x\",\"positions\":9223372036854775807}", &e);
    CHECK(v != NULL, "2^63-1: %s", e.msg);
    json_decref(v);
    CHECK(fill_json("{\"query\":\"x\",\"positions\":18446744073709551616}", NULL, NULL, &o, &e) == IG_EUSAGE &&
              strstr(e.msg, "\"positions\""), "2^64: %s", e.msg);
    /* settings: a field's default unless "none", positional or unknown */
    ig_fields_free(ig_count_fields, &o);
    ig_count_defaults(&o);
    CHECK(ig_field_setting(ig_count_fields, &o, "width", "3", &e) == 0 && o.width == 3, "width 3: %s", e.msg);
    CHECK(ig_field_setting(ig_count_fields, &o, "width", "none", &e) == 0 && o.width == 3, "none: %s", e.msg);
    CHECK(ig_field_setting(ig_count_fields, &o, "query", "q", &e) == 0 && !o.query.p, "a positional field was set");
    CHECK(ig_field_setting(ig_count_fields, &o, "no-such", "1", &e) == 0, "an unknown setting");
    CHECK(ig_field_setting(ig_count_fields, &o, "width", NULL, &e) == 0 && o.width == 3, "NULL");
    CHECK(ig_field_setting(ig_count_fields, &o, "width", "-2", &e) == IG_EUSAGE, "a bad setting passed");
    ig_fields_free(ig_count_fields, &o);
    /* a seed of 2^64 - 1 means "no seed" (a random one): refused when given, so that no seed
     * written down turns random; the largest a double bound allows below it is taken */
    ig_generate_opts g;
    ig_generate_defaults(&g);
    const ig_field *seed = ig_field_find(ig_generate_fields, "seed", 4);
    CHECK(seed && ig_field_set_text(seed, &g, (const uint8_t *)"18446744073709551615", 20, &e) == IG_EUSAGE,
          "seed 2^64-1 (the random seed's mark) taken");
    CHECK(seed && ig_field_set_text(seed, &g, (const uint8_t *)"18446744073709549568", 20, &e) == 0 &&
              g.seed == 18446744073709549568ull, "the largest seed: %s", e.msg);
    ig_fields_free(ig_generate_fields, &g);
}

int main(void)
{
    line_cases();
    json_cases();
    for (const ig_op *const *p = ig_ops(); *p; p++) {
        const ig_op *op = *p;
        char *a = calloc(1, op->opts_size), *b = calloc(1, op->opts_size);
        CHECK(a && b, "out of memory");
        if (!a || !b)
            return 1;
        op->defaults(a);
        for (const ig_field *f = op->fields; f->name; f++) {
            if (!f->def)
                continue;
            memcpy(b, a, op->opts_size);
            ig_error e = {0};
            int rc = ig_field_set_text(f, b, (const uint8_t *)f->def, strlen(f->def), &e);
            if (f->flags & IG_FIELD_RESOLVED)
                continue; /* a value chosen later ("ℓ*" may not even be a number) */
            CHECK(rc == 0, "%s: the default of %s (\"%s\") does not parse: %s", op->name, f->name, f->def, e.msg);
            CHECK(!memcmp(a, b, op->opts_size), "%s: %s does not start at its shown default \"%s\"", op->name,
                  f->name, f->def);
        }
        /* applying the table again changes nothing: the defaults function applied it */
        memcpy(b, a, op->opts_size);
        ig_error e = {0};
        CHECK(ig_fields_defaults(op->fields, b, &e) == 0, "%s: %s", op->name, e.msg);
        CHECK(!memcmp(a, b, op->opts_size), "%s: the table's defaults differ from the defaults function", op->name);
        ig_fields_free(op->fields, a);
        free(a);
        free(b);
        /* a result free takes NULL and a zeroed result, and leaves it zeroed (freed twice) */
        char *r = calloc(1, op->result_size), *zero = calloc(1, op->result_size);
        CHECK(r && zero, "out of memory");
        if (!r || !zero)
            return 1;
        op->free_result(NULL);
        op->free_result(r);
        op->free_result(r);
        CHECK(!memcmp(r, zero, op->result_size), "%s: freeing a zeroed result changed it", op->name);
        free(r);
        free(zero);
    }
    ig_buf_free(NULL);

    /* a table of our own: defaults applied, resolved rows left alone, a bad default named */
    const ig_field good[] = {
        {"n", IG_FIELD_UINT, offsetof(probe_opts, n), 0, 100, "N", "7", "a count", NULL, 0},
        {"x", IG_FIELD_DOUBLE, offsetof(probe_opts, x), 0, 1, "X", "0.25", "a weight", NULL, IG_FIELD_RESOLVED},
        {"on", IG_FIELD_BOOL, offsetof(probe_opts, on), 0, 0, NULL, "on", "a switch", NULL, 0},
        {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
    };
    probe_opts o = {.x = -1};
    ig_error e = {0};
    CHECK(ig_fields_defaults(good, &o, &e) == 0, "%s", e.msg);
    CHECK(o.n == 7 && o.on == 1, "defaults not applied: n=%llu on=%d", (unsigned long long)o.n, o.on);
    CHECK(o.x == -1, "a resolved default was applied: %g", o.x);
    const ig_field bad[] = {
        {"n", IG_FIELD_UINT, offsetof(probe_opts, n), 0, 5, "N", "9", "out of its own range", NULL, 0},
        {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
    };
    CHECK(ig_fields_defaults(bad, &o, &e) == IG_EINTERNAL, "a bad default was taken");
    CHECK(strstr(e.msg, "{n}") != NULL, "the error does not name the field: %s", e.msg);

    /* ig_fields_check: what a C caller writes into the struct by hand meets the table's
     * bounds; members left as the defaults leave them pass (their "not given" values) */
    probe_opts d = {0}, w;
    ig_fields_defaults(good, &d, NULL);
    d.x = -1; /* "not given", outside [0, 1] */
    CHECK(ig_fields_check(good, &d, &d, &e) == 0, "the defaults fail the check: %s", e.msg);
    w = d;
    w.n = 101;
    CHECK(ig_fields_check(good, &w, &d, &e) == IG_EUSAGE && strstr(e.msg, "{n}: 101 is out of range (0 to 100)"),
          "n 101: %s", e.msg);
    w = d;
    w.x = 0.5;
    CHECK(ig_fields_check(good, &w, &d, &e) == 0, "x 0.5: %s", e.msg);
    w.x = 0.0 / 0.0;
    CHECK(ig_fields_check(good, &w, &d, &e) == IG_EUSAGE && strstr(e.msg, "{x}: not a finite"), "x NaN: %s", e.msg);
    w = d;
    w.on = 2;
    CHECK(ig_fields_check(good, &w, &d, &e) == IG_EUSAGE && strstr(e.msg, "{on}"), "on 2: %s", e.msg);

    /* and every operation runs it first: out-of-range members set by hand are refused by
     * the typed run, naming the field, before anything is computed (no index needed) */
    ig_op_ctx none = {NULL, NULL, NULL};
    ig_predict_opts po;
    ig_predict_defaults(&po);
    ig_predict_result pr;
    /* a required text left as the defaults leave it is missing, as the codecs say; an empty
     * one is given */
    CHECK(ig_predict_run(&none, &po, &pr, &e) == IG_EUSAGE && strstr(e.msg, "{query} is required"), "no query: %s",
          e.msg);
    po.query = (ig_bytes){(uint8_t *)"", 0};
    CHECK(ig_predict_run(&none, &po, &pr, &e) == IG_EUSAGE && strstr(e.msg, "no index given"), "defaults: %s", e.msg);
    {
        ig_count_opts c0;
        ig_count_defaults(&c0);
        ig_count_result cr0;
        CHECK(ig_count_run(&none, &c0, &cr0, &e) == IG_EUSAGE && strstr(e.msg, "{query} is required"),
              "count without a query: %s", e.msg);
        c0.ids = (ig_bytes){(uint8_t *)"1", 1};
        CHECK(ig_count_run(&none, &c0, &cr0, &e) == IG_EUSAGE && !strstr(e.msg, "required"),
              "count with ids needs no query: %s", e.msg);
    }
    po.query = (ig_bytes){0};
    po.model.weighted = 7;
    CHECK(ig_predict_run(&none, &po, &pr, &e) == IG_EUSAGE && strstr(e.msg, "{weighted}"), "weighted 7: %s", e.msg);
    ig_predict_defaults(&po);
    po.model.n = (1ull << 32) + 3;
    CHECK(ig_predict_run(&none, &po, &pr, &e) == IG_EUSAGE && strstr(e.msg, "{n}"), "n 2^32+3: %s", e.msg);
    ig_predict_defaults(&po);
    po.model.max_context = -5;
    CHECK(ig_predict_run(&none, &po, &pr, &e) == IG_EUSAGE && strstr(e.msg, "{max_context}"), "max_context -5: %s",
          e.msg);
    ig_generate_opts go;
    ig_generate_defaults(&go);
    go.max = UINT64_MAX;
    ig_generate_result gr;
    CHECK(ig_generate_run(&none, &go, &gr, &e) == IG_EUSAGE && strstr(e.msg, "{max}"), "generate max: %s", e.msg);
    ig_count_opts co;
    ig_count_defaults(&co);
    co.query = (ig_bytes){NULL, 5};
    ig_count_result cr;
    CHECK(ig_count_run(&none, &co, &cr, &e) == IG_EUSAGE && strstr(e.msg, "{query}"), "query NULL+5: %s", e.msg);
    /* a model written by hand is checked whole by ig_model_check */
    ig_model m;
    ig_model_default(&m);
    CHECK(ig_model_check(&m, &e) == 0, "default model: %s", e.msg);
    m.kind = (ig_model_kind)9;
    CHECK(ig_model_check(&m, &e) == IG_EUSAGE, "model kind 9 passed");
    ig_model_default(&m);
    m.kind = IG_MODEL_WEIGHTED;
    m.weight = (ig_weight_fn)9;
    CHECK(ig_model_check(&m, &e) == IG_EUSAGE && strstr(e.msg, "{weighted}"), "weight 9: %s", e.msg);
    m.weight = IG_WEIGHT_SIGMOID;
    m.sig_slope = 0.0 / 0.0;
    CHECK(ig_model_check(&m, &e) == IG_EUSAGE, "a NaN slope passed");
    ig_model_default(&m);
    m.max_context = -5;
    CHECK(ig_model_check(&m, &e) == IG_EUSAGE && strstr(e.msg, "{max_context}"), "max_context -5: %s", e.msg);
    c_caller_cases();
    return check_done("fields");
}
