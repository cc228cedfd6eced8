/* Unit tests of the operations' field tables: each table is the one place a default is
 * written, so every default must parse as the codecs parse it, the operation's defaults
 * function must leave every field at the default its row shows, and a row whose default is
 * resolved later must not be applied. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "infinigram/fields.h"

typedef struct probe_opts {
    uint64_t n;
    double x;
    int on;
} probe_opts;

int main(void)
{
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
    }

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
    return check_done("fields");
}
