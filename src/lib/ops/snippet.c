/*
 * Snippets: one line of a document around a match, for listings. Built from the
 * document's own bytes, cut at character boundaries, never crossing into the next
 * document.
 */
#include <stdlib.h>

#include "infinigram/query.h"
#include "util/util.h"
#include "op_impl.h"

/* Appends the display form of text bytes: newline as ↵, tab and CR as a space, other
 * control bytes as '.', a byte that starts no whole UTF-8 character as U+FFFD (a listing
 * is text to show, and JSON must carry it). */
void igi_put_visible(ig_buf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x80 && c != 0xff) {
            size_t k = 2;
            while (k <= 4 && !(i + k <= n && ig_utf8_valid(p + i, k, NULL)))
                k++;
            if (k <= 4) {
                ig_buf_append(b, p + i, k);
                i += k - 1;
            } else
                ig_buf_append(b, "\xef\xbf\xbd", 3);
        } else if (c == '\n')
            ig_buf_append(b, "\xe2\x86\xb5", 3);
        else if (c == '\t' || c == '\r')
            ig_buf_append(b, " ", 1);
        else if (c < 0x20 || c == 0x7f || c == 0xff)
            ig_buf_append(b, ".", 1);
        else
            ig_buf_append(b, &c, 1);
    }
}

static int continuation(const uint8_t *d, uint64_t at) { return (d[at] & 0xC0) == 0x80; }

char *ig_snippet(const ig_index *idx, ig_pos pos, size_t len1, size_t len2, size_t width, size_t hl[3])
{
    ig_location loc;
    ig_doc doc;
    ig_error e;
    if (ig_locate(idx, pos, NULL, &loc, &e) || ig_doc_get(idx, loc.doc, &doc, &e))
        return NULL;
    /* offsets inside the document, saturating: the lengths and the width are the caller's */
    uint64_t dstart = doc.start, dlen = doc.length;
    size_t got = (size_t)dlen;
    const uint8_t *d = ig_text(idx, pos.shard, dstart, &got);
    if (!d || got < dlen || pos.offset < dstart || pos.offset - dstart > dlen)
        return NULL;
    uint64_t ms = pos.offset - dstart;
    uint64_t mid = len1 > dlen - ms ? dlen : ms + len1;
    uint64_t mend = len2 > dlen - mid ? dlen : mid + len2;
    /* the match shows whole characters: a pattern that starts or ends inside one (a raw
     * byte query) widens to its edges, as does the boundary between its two parts */
    for (int k = 0; k < 3 && ms > 0 && ms < dlen && continuation(d, ms); k++)
        ms--;
    for (int k = 0; k < 3 && mend < dlen && mend > 0 && continuation(d, mend); k++)
        mend++;
    for (int k = 0; k < 3 && mid < mend && mid > ms && continuation(d, mid); k++)
        mid++;
    uint64_t s = ms > width ? ms - width : 0;
    uint64_t t = width < dlen - mend ? mend + width : dlen;
    /* the context never cuts a character either */
    while (s < ms && continuation(d, s))
        s++;
    while (t > mend && t < dlen && continuation(d, t))
        t--;
    const uint8_t *txt = d + s;
    size_t n = (size_t)(t - s);
    size_t pre = (size_t)(ms - s), a = (size_t)(mid - ms), b = (size_t)(mend - mid);
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint8_t *orig = NULL;
    if (info.casefold) {
        /* the original bytes of each part (a part boundary inside the folding of one
         * character moves to that character's edge: the match widens to whole characters) */
        size_t olen = 0, cut[4];
        uint64_t at[5] = {dstart + s, dstart + ms, dstart + mid, dstart + mend, dstart + t}; /* in the shard */
        for (int i = 0; i < 5; i++) {
            at[i] = ig_text_char_edge(idx, pos.shard, at[i], i >= 2);
            if (i && at[i] < at[i - 1])
                at[i] = at[i - 1];
        }
        for (int i = 0; i < 4; i++) {
            if (ig_text_original(idx, pos.shard, at[i], at[i + 1] - at[i], &orig, &olen, NULL, &e)) {
                free(orig);
                return NULL;
            }
            cut[i] = olen;
        }
        txt = orig;
        n = olen;
        pre = cut[0];
        a = cut[1] - cut[0];
        b = cut[2] - cut[1];
    }
    ig_buf out = {0};
    if (s > 0)
        ig_buf_append(&out, "\xe2\x80\xa6", 3);
    igi_put_visible(&out, txt, pre);
    hl[0] = out.len;
    igi_put_visible(&out, txt + pre, a);
    hl[1] = out.len;
    igi_put_visible(&out, txt + pre + a, b);
    hl[2] = out.len;
    igi_put_visible(&out, txt + pre + a + b, n - pre - a - b);
    if (t < dlen)
        ig_buf_append(&out, "\xe2\x80\xa6", 3);
    free(orig);
    if (ig_buf_append(&out, "", 1)) {
        ig_buf_free(&out);
        return NULL;
    }
    /* the buffer starts at a page: a listing of a million short snippets kept 4 GB of them */
    char *fit = realloc(out.data, out.len);
    return fit ? fit : (char *)out.data;
}
