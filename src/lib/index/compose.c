/*
 * Composed indexes: several built indexes queried as one corpus, and sets of documents
 * taken away from them, without copying or rebuilding anything.
 *
 * Documents never cross shards and no query matches across a document's end, so a count,
 * a distribution or a list of positions over one index is the sum (or the concatenation,
 * in corpus order) of its shards' answers, whatever the shard boundaries. Composing is
 * therefore opening each member and moving its shards, in member order, into one index:
 * every query then runs over the members as it runs over the shards of one index, and
 * answers as one index built from the members' sources in that order would (document
 * numbers run on from member to member).
 *
 * A subtracted set T is an index whose every document is, byte for byte, a document of
 * the members. Its shards join the composed index as subtracting shards: a count is the
 * members' count minus T's. That is exact, not an estimate: an occurrence of a pattern
 * lies inside one document, and each document of T is a copy of one document of the
 * members, so T's occurrences are exactly the occurrences inside the documents it takes
 * away; the difference is the count a rebuild without them would give, and it can never
 * be negative. Next-byte histograms subtract the same way (the byte after an occurrence
 * is inside its document or is its end marker). Which documents are taken away is found
 * at open by looking each document of T up in the members' suffix arrays (its bytes and
 * end marker, starting at a document's start): a copy present k times in T takes away the
 * first k such documents in corpus order. Those documents' occurrences are never listed,
 * and documents are numbered as if they were absent.
 */
#include "infinigram/index.h"
#include "index_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

/* Says which member an error of opening it comes from. */
static void name_member(ig_error *err, const char *name)
{
    if (!err)
        return;
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    msg[sizeof msg - 1] = 0;
    ig_error_set(err, err->code, "%s: %s", name, msg);
}

int igi_index_compatible(const ig_index_info *a, const char *an, const ig_index_info *b, const char *bn,
                         ig_error *err)
{
    if (a->normalized != b->normalized)
        return ig_error_set(err, IG_EUSAGE,
                            "%s and %s index different text: %s is NFC-normalised and %s is not (rebuild one "
                            "with the other's --normalize setting)",
                            an, bn, a->normalized ? an : bn, a->normalized ? bn : an);
    if (a->casefold != b->casefold)
        return ig_error_set(err, IG_EUSAGE,
                            "%s and %s index different text: %s is case-folded and %s is not (rebuild one "
                            "with the other's --casefold setting)",
                            an, bn, a->casefold ? an : bn, a->casefold ? bn : an);
    if (a->pointer_width != b->pointer_width)
        return ig_error_set(err, IG_EUSAGE,
                            "%s and %s were built with different suffix-array pointer widths (%u and %u bytes): "
                            "rebuild the narrower one with build --pointer-width 5",
                            an, bn, a->pointer_width, b->pointer_width);
    return 0;
}

/* Per adding shard: which of its documents are taken away (a bitmap made on first use). */
typedef struct taken {
    uint64_t *bits;
    uint64_t n;
} taken;

/* In a case-folded index equal folded text is not enough: the original bytes of document d
 * of shard s must be `orig` (the subtracted document's). 1 when they are, 0 when not, -1 when
 * memory ran out. */
static int same_original(const ig_shard *s, uint64_t d, const ig_buf *orig, ig_buf *tmp)
{
    uint64_t a = ig_shard_doc_start(s, d), e = ig_shard_doc_start(s, d + 1) - 1;
    tmp->len = 0;
    if (igi_fold_unfold(s, a, e, tmp))
        return -1;
    return tmp->len == orig->len && !memcmp(tmp->data, orig->data, orig->len);
}

/* Takes away the first document of the adding shards, in corpus order, whose bytes are
 * text[0, len] (the end marker included), that is not taken yet and, in a case-folded index,
 * whose original bytes are `orig`. 0 when there is none, -1 when memory ran out. */
static int take_copy(const ig_index *idx, taken *tk, const uint8_t *text, size_t len, const ig_buf *orig,
                     ig_buf *tmp, ig_error *err)
{
    for (uint32_t si = 0; si < idx->npos; si++) {
        const ig_shard *s = &idx->shards[si];
        ig_range r = igi_shard_find(idx, s, text, len + 1, 0, s->rows, 0);
        uint64_t best = UINT64_MAX;
        for (uint64_t row = r.lo; row < r.hi; row++) {
            uint64_t p = ig_shard_sa(s, s->pw, row), d = igi_shard_doc_of(s, p);
            if (ig_shard_doc_start(s, d) != p || d >= best || (tk[si].bits && (tk[si].bits[d / 64] >> (d % 64) & 1)))
                continue;
            int same = orig ? same_original(s, d, orig, tmp) : 1;
            if (same < 0) {
                ig_error_set(err, IG_ENOMEM, "out of memory");
                return -1;
            }
            if (same)
                best = d;
        }
        if (best == UINT64_MAX)
            continue;
        if (!tk[si].bits && !(tk[si].bits = calloc((size_t)(s->ndocs + 63) / 64, 8))) {
            ig_error_set(err, IG_ENOMEM, "out of memory");
            return -1;
        }
        tk[si].bits[best / 64] |= (uint64_t)1 << (best % 64);
        tk[si].n++;
        return 1;
    }
    return 0;
}

/* Matches every document of the subtracting shards and records what they take away. */
static int match_subtracted(ig_index *idx, ig_error *err)
{
    taken *tk = calloc(idx->npos ? idx->npos : 1, sizeof *tk);
    if (!tk)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = 0;
    ig_buf orig = {0}, tmp = {0};
    for (uint32_t si = idx->npos; !rc && si < idx->nshards; si++) {
        const ig_shard *t = &idx->shards[si];
        for (uint64_t d = 0; !rc && d < t->ndocs; d++) {
            uint64_t a = ig_shard_doc_start(t, d), e = ig_shard_doc_start(t, d + 1) - 1;
            orig.len = 0;
            if (idx->man.casefold && igi_fold_unfold(t, a, e, &orig)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            int got = take_copy(idx, tk, t->text + a, (size_t)(e - a), idx->man.casefold ? &orig : NULL, &tmp, err);
            if (got < 0)
                rc = IG_ENOMEM;
            else if (got == 0 && (rc = ig_index_health(idx, NULL, err)))
                ; /* a corrupt member explains the miss better than a missing document */
            else if (got == 0) {
                const ig_member *m = &idx->members[t->member];
                uint64_t off = ig_load_le64(t->docmeta + d * 16), line = ig_load_le64(t->docmeta + d * 16 + 8);
                const char *name = off < t->names_len ? t->names + off : "?";
                char where[32] = "";
                if (line)
                    snprintf(where, sizeof where, ":%" PRIu64, line);
                rc = ig_error_set(err, IG_EUSAGE,
                                  "%s: document %" PRIu64 " (%s%s) is not a document of what it is taken from: no "
                                  "document there has the same bytes, or each one that has is taken away by an "
                                  "earlier copy",
                                  m->name, t->doc_base + d, name, where);
            }
        }
    }
    ig_buf_free(&orig);
    ig_buf_free(&tmp);
    for (uint32_t si = 0; si < idx->npos; si++) {
        ig_shard *s = &idx->shards[si];
        if (!rc && tk[si].n) {
            if (!(s->removed = malloc((size_t)tk[si].n * sizeof *s->removed)))
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            for (uint64_t d = 0; !rc && d < s->ndocs; d++)
                if (tk[si].bits[d / 64] >> (d % 64) & 1)
                    s->removed[s->nremoved++] = d;
        }
        free(tk[si].bits);
    }
    free(tk);
    return rc;
}

/* Numbers the shown documents: member after member, those taken away skipped. */
static void number_documents(ig_index *idx)
{
    uint64_t base = 0;
    for (uint32_t m = 0; m < idx->nmembers; m++) {
        ig_member *mm = &idx->members[m];
        uint64_t first = base;
        for (uint32_t i = mm->first_shard; i < mm->first_shard + mm->nshards; i++) {
            ig_shard *s = &idx->shards[i];
            s->doc_base = mm->neg ? 0 : base;
            idx->man.shards[i].doc_base = s->doc_base;
            if (!mm->neg)
                base += s->ndocs - s->nremoved;
        }
        mm->documents = base - first;
    }
    idx->man.documents = base;
}

int ig_index_open_composed(ig_index **out, const ig_index_member_spec *members, size_t n,
                           const ig_index_member_spec *minus, size_t nminus, ig_error *err)
{
    *out = NULL;
    if (n == 0)
        return ig_error_set(err, IG_EUSAGE, "a composition needs at least one member");
    if (n + nminus > UINT32_MAX / 2)
        return ig_error_set(err, IG_EUSAGE, "too many members");
    ig_index *idx = calloc(1, sizeof *idx);
    if (!idx)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    pthread_mutex_init(&idx->lines_mu, NULL);
    pthread_mutex_init(&idx->bm25_mu, NULL);
    int rc = 0;
    if (!(idx->members = calloc(n + nminus, sizeof *idx->members)) || !(idx->health = calloc(1, sizeof *idx->health))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    uint32_t nshards = 0;
    uint64_t bytes = 0, removed_bytes = 0;
    for (size_t i = 0; i < n + nminus; i++) {
        const ig_index_member_spec *sp = i < n ? &members[i] : &minus[i - n];
        ig_member *m = &idx->members[idx->nmembers];
        if (!sp->dir || !sp->name) {
            rc = ig_error_set(err, IG_EUSAGE, "member %zu has no %s", i + 1, sp->dir ? "name" : "index directory");
            goto fail;
        }
        if (!(m->name = strdup(sp->name))) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            goto fail;
        }
        idx->nmembers++;
        if ((rc = igi_index_open(&m->idx, sp->dir, 0, err))) {
            name_member(err, sp->name);
            goto fail;
        }
        ig_index_info first, info;
        ig_index_get_info(idx->members[0].idx, &first);
        ig_index_get_info(m->idx, &info);
        if (i > 0 && (rc = igi_index_compatible(&first, idx->members[0].name, &info, m->name, err)))
            goto fail;
        m->neg = i >= n;
        m->first_shard = nshards;
        m->nshards = m->idx->nshards;
        nshards += m->nshards;
        if (m->neg)
            removed_bytes += m->idx->man.bytes;
        else
            bytes += m->idx->man.bytes;
    }
    const ig_index *first = idx->members[0].idx;
    idx->pw = first->pw;
    idx->prefetch = 1;
    idx->man.format_version = first->man.format_version;
    idx->man.pointer_width = first->man.pointer_width;
    idx->man.sample_stride = first->man.sample_stride;
    idx->man.wide_api = first->man.wide_api;
    idx->man.normalized = first->man.normalized;
    idx->man.casefold = first->man.casefold;
    if (!(idx->shards = calloc(nshards, sizeof *idx->shards)) ||
        !(idx->man.shards = calloc(nshards, sizeof *idx->man.shards))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    /* Move the shards: the composed index unmaps and frees them from now on. */
    for (uint32_t mi = 0; mi < idx->nmembers; mi++) {
        ig_member *m = &idx->members[mi];
        for (uint32_t k = 0; k < m->nshards; k++) {
            uint32_t g = m->first_shard + k;
            idx->shards[g] = m->idx->shards[k];
            idx->shards[g].id = g;
            idx->shards[g].member = mi;
            idx->shards[g].neg = m->neg;
            idx->man.shards[g] = m->idx->man.shards[k];
        }
        if (!m->neg)
            idx->npos += m->nshards;
        m->idx->nshards = 0;
    }
    idx->nshards = idx->man.nshards = nshards;
    idx->man.bytes = bytes - removed_bytes;
    if (idx->npos < nshards && (rc = match_subtracted(idx, err)))
        goto fail;
    number_documents(idx);
    igi_index_make_pool(idx);
    *out = idx;
    return 0;
fail:
    ig_index_close(&idx);
    return rc;
}

const char *ig_index_member(const ig_index *idx, uint64_t doc)
{
    if (!idx || !idx->members || doc >= idx->man.documents)
        return NULL;
    /* members that add come first, their documents numbered in order */
    for (uint32_t i = 0; i < idx->nmembers && !idx->members[i].neg; i++) {
        if (doc < idx->members[i].documents)
            return idx->members[i].name;
        doc -= idx->members[i].documents;
    }
    return NULL;
}

int ig_index_composed(const ig_index *idx, uint32_t *members, uint32_t *subtracted)
{
    uint32_t a = 0, b = 0;
    for (uint32_t i = 0; idx && i < idx->nmembers; i++)
        *(idx->members[i].neg ? &b : &a) += 1;
    if (members)
        *members = a;
    if (subtracted)
        *subtracted = b;
    return idx && idx->members;
}
