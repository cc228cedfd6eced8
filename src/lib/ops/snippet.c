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
 * control bytes as '.'. */
void igi_put_visible(ig_buf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\n')
            ig_buf_append(b, "\xe2\x86\xb5", 3);
        else if (c == '\t' || c == '\r')
            ig_buf_append(b, " ", 1);
        else if (c < 0x20 || c == 0x7f || c == 0xff)
            ig_buf_append(b, ".", 1);
        else
            ig_buf_append(b, &c, 1);
    }
}

char *ig_snippet(const ig_index *idx, ig_pos pos, size_t len1, size_t len2, size_t width, size_t hl[3])
{
    ig_location loc;
    ig_doc doc;
    ig_error e;
    if (ig_locate(idx, pos, NULL, &loc, &e) || ig_doc_get(idx, loc.doc, &doc, &e))
        return NULL;
    uint64_t dstart = doc.start, dend = doc.start + doc.length;
    uint64_t mid = pos.offset + len1 > dend ? dend : pos.offset + len1;
    uint64_t mend = mid + len2 > dend ? dend : mid + len2;
    uint64_t s = pos.offset > dstart + width ? pos.offset - width : dstart;
    uint64_t t = mend + width < dend ? mend + width : dend;
    size_t n = (size_t)(t - s);
    const uint8_t *txt = ig_text(idx, pos.shard, s, &n);
    if (!txt)
        return NULL;
    /* never cut a UTF-8 character */
    while (s < pos.offset && n && (txt[0] & 0xC0) == 0x80) {
        s++;
        txt++;
        n--;
    }
    while (t > mend && t < dend && n && (txt[n] & 0xC0) == 0x80) {
        t--;
        n--;
    }
    size_t pre = (size_t)(pos.offset - s), a = (size_t)(mid - pos.offset), b = (size_t)(mend - mid);
    if (pre + a + b > n)
        return NULL;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint8_t *orig = NULL;
    if (info.casefold) {
        /* the original bytes of each part (a part boundary inside the folding of one
         * character moves to that character's edge: the match widens to whole characters) */
        size_t olen = 0, cut[4];
        uint64_t at[5] = {s, pos.offset, mid, mend, t};
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
    if (s > dstart)
        ig_buf_append(&out, "\xe2\x80\xa6", 3);
    igi_put_visible(&out, txt, pre);
    hl[0] = out.len;
    igi_put_visible(&out, txt + pre, a);
    hl[1] = out.len;
    igi_put_visible(&out, txt + pre + a, b);
    hl[2] = out.len;
    igi_put_visible(&out, txt + pre + a + b, n - pre - a - b);
    if (t < dend)
        ig_buf_append(&out, "\xe2\x80\xa6", 3);
    free(orig);
    if (ig_buf_append(&out, "", 1)) {
        ig_buf_free(&out);
        return NULL;
    }
    return (char *)out.data;
}
