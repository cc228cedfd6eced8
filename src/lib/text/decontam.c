/*
 * Decontamination at build time: the eval set's n-grams in an exact set, and each
 * document of the build tested against it by BFF's rule (build.h): caught when at least
 * the threshold share (0.8) of its n-grams (13 words by default) are in the set, then
 * dropped or, flag-only, kept and listed. Counts are kept per source file. Memory: the
 * eval set's distinct n-grams (their bytes plus 24 bytes each), and one document's words.
 */
#include <stdlib.h>
#include <string.h>

#include "infinigram/contam.h"
#include "ngrams.h"
#include "util/util.h"

struct igi_decontam {
    ig_decontam_options o;
    igi_gramset set;
    ig_buf scratch, low;
    ig_decontam_report *rep;
    size_t srccap, doccap;
};

void ig_decontam_options_default(ig_decontam_options *o)
{
    memset(o, 0, sizeof *o);
    o->n = IG_CONTAM_N;
    o->threshold = IG_CONTAM_THRESHOLD;
}

void igi_decontam_report_free(ig_decontam_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nsources; i++)
        free(r->sources[i].name);
    for (size_t i = 0; i < r->ndocs; i++)
        free(r->docs[i].name);
    IGI_FREE(r->sources, r->docs, r);
}

void igi_decontam_free(igi_decontam *d)
{
    if (!d)
        return;
    igi_gramset_free(&d->set);
    ig_buf_free(&d->scratch);
    ig_buf_free(&d->low);
    igi_decontam_report_free(d->rep);
    free(d);
}

ig_decontam_report *igi_decontam_take(igi_decontam *d)
{
    ig_decontam_report *r = d ? d->rep : NULL;
    if (d)
        d->rep = NULL;
    return r;
}

static int add_gram(void *user, const uint8_t *g, size_t len, ig_error *err)
{
    return igi_gramset_add(user, g, len, NULL, err);
}

/* Lowercased when asked: *p, *len then point into d->low. */
static int prepare(igi_decontam *d, const uint8_t **p, size_t *len, ig_error *err)
{
    if (!d->o.lowercase)
        return 0;
    d->low.len = 0;
    int rc = igi_lowercase(*p, *len, &d->low, err);
    if (!rc && d->low.data) {
        *p = d->low.data;
        *len = d->low.len;
    }
    return rc;
}

/* The eval set's fingerprint a decontaminated build records: each item's length, then its bytes. */
static uint64_t items_hash(const ig_texts *items)
{
    ig_hash h;
    igi_hash_init(&h);
    for (size_t i = 0; i < items->n; i++) {
        uint64_t n = items->v[i].n;
        igi_hash_update(&h, &n, sizeof n);
        igi_hash_update(&h, items->v[i].p, items->v[i].n);
    }
    return igi_hash_final(&h);
}

int igi_decontam_eval_hash(const char *path, const char *field, int normalize, uint64_t *hash, ig_error *err)
{
    ig_texts items;
    uint64_t *lines;
    int rc = ig_eval_set_load(path, field, normalize, &items, &lines, err);
    if (rc)
        return rc;
    *hash = items_hash(&items);
    ig_eval_set_free(&items, lines);
    return 0;
}

int igi_decontam_open(const ig_decontam_options *o, int normalize, igi_decontam **out, ig_error *err)
{
    *out = NULL;
    if (!o->eval_path)
        return ig_error_set(err, IG_EUSAGE, "decontamination needs an eval set");
    if (o->n < 1)
        return ig_error_set(err, IG_EUSAGE, "decontamination: n must be at least 1");
    if (!(o->threshold >= 0 && o->threshold <= 1))
        return ig_error_set(err, IG_EUSAGE, "decontamination: the threshold must be within 0 to 1");
    igi_decontam *d = calloc(1, sizeof *d);
    if (!d || !(d->rep = calloc(1, sizeof *d->rep))) {
        free(d);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    d->o = *o;
    d->o.eval_path = d->o.field = NULL; /* not kept: the caller's strings */
    d->rep->flag_only = o->flag_only;
    ig_texts items;
    uint64_t *lines;
    int rc = ig_eval_set_load(o->eval_path, o->field, normalize, &items, &lines, err);
    if (rc) {
        igi_decontam_free(d);
        return rc;
    }
    for (size_t i = 0; i < items.n && !rc; i++) {
        const uint8_t *p = items.v[i].p;
        size_t len = items.v[i].n;
        if (!(rc = prepare(d, &p, &len, err)))
            rc = igi_ngrams_each(p, len, o->n, o->bytes, &d->scratch, add_gram, &d->set, NULL, err);
    }
    d->rep->eval_hash = items_hash(&items);
    d->rep->eval_items = items.n;
    d->rep->eval_ngrams = d->set.n;
    ig_eval_set_free(&items, lines);
    if (rc) {
        igi_decontam_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

typedef struct doc_count {
    const igi_gramset *set;
    uint64_t ngrams, matched;
} doc_count;

static int test_gram(void *user, const uint8_t *g, size_t len, ig_error *err)
{
    (void)err;
    doc_count *c = user;
    c->ngrams++;
    c->matched += igi_gramset_has(c->set, g, len);
    return 0;
}

int igi_decontam_doc(igi_decontam *d, const char *name, uint64_t source_line, const uint8_t *text, size_t len,
                     uint64_t doc_id, int *keep, ig_error *err)
{
    *keep = 1;
    ig_decontam_report *r = d->rep;
    /* documents of one file arrive together: a new name is a new source */
    if (!r->nsources || strcmp(r->sources[r->nsources - 1].name, name)) {
        if (igi_grow(&r->sources, r->nsources, &d->srccap, sizeof *r->sources, 8))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        char *nm = strdup(name);
        if (!nm)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        r->sources[r->nsources++] = (ig_decontam_source){nm, 0, 0};
    }
    ig_decontam_source *src = &r->sources[r->nsources - 1];
    src->documents++;
    r->documents++;
    int rc = prepare(d, &text, &len, err);
    doc_count c = {&d->set, 0, 0};
    if (!rc)
        rc = igi_ngrams_each(text, len, d->o.n, d->o.bytes, &d->scratch, test_gram, &c, NULL, err);
    if (rc)
        return rc;
    /* the same comparison as contam's: the overlap as a double against the threshold */
    if (!c.ngrams || (double)c.matched / (double)c.ngrams < d->o.threshold)
        return 0;
    src->caught++;
    r->caught++;
    *keep = d->o.flag_only;
    if (r->ndocs >= IG_DECONTAM_LISTED)
        return 0;
    if (igi_grow(&r->docs, r->ndocs, &d->doccap, sizeof *r->docs, 16))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    char *nm = strdup(name);
    if (!nm)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    r->docs[r->ndocs++] = (ig_decontam_doc){nm, source_line, doc_id, c.ngrams, c.matched};
    return 0;
}
