/*
 * Terminal rendering shared by commands: byte sizes, the build progress bar (stderr,
 * only on a terminal), one-line snippets around corpus positions with the match
 * highlighted (colour only when stdout is a terminal and NO_COLOR is unset).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "shell.h"

void sh_fmt_bytes(uint64_t n, char *buf, size_t len)
{
    if (n < 1000)
        snprintf(buf, len, "%llu B", (unsigned long long)n);
    else if (n < 1000000)
        snprintf(buf, len, "%.1f kB", n / 1e3);
    else if (n < 1000000000)
        snprintf(buf, len, "%.1f MB", n / 1e6);
    else
        snprintf(buf, len, "%.2f GB", n / 1e9);
}

static const char *phase_name(ig_build_phase p)
{
    static const char *names[] = {"scan", "read", "sort", "write", "sync", "commit", "done"};
    return (unsigned)p <= IG_PHASE_DONE ? names[p] : "?";
}

void sh_progress_clear(shell *sh)
{
    if (sh->prog_drawn) {
        fprintf(sh->err, "\r\033[K");
        fflush(sh->err);
        sh->prog_drawn = 0;
    }
}

int sh_progress_cb(void *user, const ig_progress *p)
{
    shell *sh = user;
    /* Test hooks for the atomic-build tests: die hard, or freeze, at a named phase. */
    const char *kill_at = getenv("INFINIGRAM_TEST_KILL_AT"), *stop_at = getenv("INFINIGRAM_TEST_STOP_AT");
    if (kill_at && !strcmp(kill_at, phase_name(p->phase)))
        kill(getpid(), SIGKILL);
    if (stop_at && !strcmp(stop_at, phase_name(p->phase)) && !sh->test_stopped) {
        sh->test_stopped = 1; /* phases repeat while a shard sorts: freeze only once */
        kill(getpid(), SIGSTOP);
    }
    if (sh_interrupted)
        return 1;
    if (!sh->progress)
        return 0;
    double now = sh_clock();
    if (p->phase == IG_PHASE_SCAN) {
        sh->prog_t0 = now;
        sh->prog_last = 0;
    }
    if (p->phase == IG_PHASE_DONE || p->phase == IG_PHASE_COMMIT) {
        sh_progress_clear(sh);
        return 0;
    }
    if (now - sh->prog_last < 0.1)
        return 0;
    sh->prog_last = now;
    double frac = p->total ? (double)p->done / p->total : 0;
    if (frac > 1)
        frac = 1;
    int w = sh->columns > 60 ? 30 : 15;
    int fill = (int)(frac * w);
    char bar[64];
    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    double el = now - sh->prog_t0, rate = el > 0 ? p->done / el / 1e6 : 0;
    char eta[32] = "";
    if (p->phase == IG_PHASE_READ && frac > 0.01 && el > 0.5)
        snprintf(eta, sizeof eta, " ETA %.0fs", el / frac - el);
    if (p->phase == IG_PHASE_READ)
        fprintf(sh->err, "\r\033[K%-5s [%s] %3.0f%% %6.1f MB/s%s", phase_name(p->phase), bar, frac * 100, rate, eta);
    else /* sorting and writing have no byte progress: show that time passes */
        fprintf(sh->err, "\r\033[K%-5s shard %u, %.1f s elapsed (Ctrl-C cancels)", phase_name(p->phase), p->shard, el);
    fflush(sh->err);
    sh->prog_drawn = 1;
    return 0;
}

void sh_print_snippet2(shell *sh, const char *s, const size_t hl[3])
{
    sh_write(sh, s, hl[0]);
    sh_puts(sh, sh_c(sh, SH_HL));
    sh_write(sh, s + hl[0], hl[1] - hl[0]);
    sh_puts(sh, sh_c(sh, SH_RESET));
    sh_puts(sh, sh_c(sh, SH_HL2));
    sh_write(sh, s + hl[1], hl[2] - hl[1]);
    sh_puts(sh, sh_c(sh, SH_RESET));
    sh_puts(sh, s + hl[2]);
}

void sh_print_snippet(shell *sh, const char *s, size_t hl0, size_t hl1)
{
    sh_write(sh, s, hl0);
    sh_puts(sh, sh_c(sh, SH_HL));
    sh_write(sh, s + hl0, hl1 - hl0);
    sh_puts(sh, sh_c(sh, SH_RESET));
    sh_puts(sh, s + hl1);
}

char *sh_quote(const char *p, size_t n)
{
    /* at most four bytes per input byte (\xHH), the quotes and the NUL */
    char *out = n < (SIZE_MAX - 3) / 4 ? malloc(4 * n + 3) : NULL, *q = out;
    if (!out)
        return NULL;
    *q++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') {
            *q++ = '\\';
            *q++ = (char)c;
        } else if (c == '\n' || c == '\t') {
            *q++ = '\\';
            *q++ = c == '\n' ? 'n' : 't';
        } else if (c < 0x20 || c == 0x7f || c == 0xff) {
            q += sprintf(q, "\\x%02x", c);
        } else {
            *q++ = (char)c;
        }
    }
    *q++ = '"';
    *q = '\0';
    return out;
}

size_t sh_display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

void sh_short_name(const char *name, size_t max, char *buf, size_t len)
{
    /* Paths of more than two components show only their last two (or the last one when
     * two do not fit): a listing then fits the terminal and does not depend on where a
     * corpus happens to live. :dataset info and JSON keep full paths. */
    const char *tail[3] = {NULL, NULL, NULL};
    int found = 0;
    for (const char *q = name + strlen(name); q > name && found < 3; q--)
        if (q[-1] == '/')
            tail[found++] = q; /* start of the last, last two, last three components */
    const char *shown = name, *ell = "";
    if (found == 3 || (found == 2 && name[0] != '/')) {
        shown = sh_display_width(tail[1]) + 2 <= max ? tail[1] : tail[0];
        ell = "\xe2\x80\xa6/";
    }
    size_t w = sh_display_width(shown) + (*ell ? 2 : 0);
    if (w > max && max > 2) {
        for (size_t skip = w - (max - 1); skip && *shown; shown++)
            if (((unsigned char)shown[1] & 0xC0) != 0x80)
                skip--;
        ell = "\xe2\x80\xa6";
    }
    snprintf(buf, len, "%s%s", ell, shown);
    sh_controls_hidden(buf);
}

void sh_controls_hidden(char *s)
{
    /* a file name is whatever bytes its maker chose: a newline would split the line, an
     * escape sequence would drive the terminal */
    for (char *q = s; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7F)
            *q = '?';
}

void sh_progress_draw(shell *sh, const char *label, uint64_t done, uint64_t total)
{
    if (!sh->progress)
        return;
    double now = sh_clock();
    if (!sh->prog_drawn)
        sh->prog_t0 = now;
    else if (now - sh->prog_last < 0.1)
        return;
    sh->prog_last = now;
    double frac = total ? (double)done / (double)total : 0;
    if (frac > 1)
        frac = 1;
    char bar[32];
    int w = 30, fill = (int)(frac * w);
    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    double el = now - sh->prog_t0;
    fprintf(sh->err, "\r\033[K%-5s [%s] %3.0f%%", label, bar, frac * 100);
    if (frac > 0.02 && el > 0.5)
        fprintf(sh->err, " ETA %.0fs", el / frac - el);
    fflush(sh->err);
    sh->prog_drawn = 1;
}

void sh_doc_label(shell *sh, uint64_t doc, const char *name, uint64_t source_line, size_t max, char *buf,
                  size_t len)
{
    /* a composed dataset's documents say which member they belong to: "web:…/a.txt" */
    const char *m = sh->idx ? ig_index_member(sh->idx, doc) : NULL;
    char shortn[256], rec[24] = "";
    sh_short_name(name ? name : "", max, shortn, sizeof shortn);
    if (source_line)
        snprintf(rec, sizeof rec, "#%" PRIu64, source_line);
    snprintf(buf, len, "%s%s%s%s", m ? m : "", m ? ":" : "", shortn, rec);
}

/* A token dataset's context, the longest suffix used highlighted. */
void sh_print_token_context(shell *sh, const uint8_t *ctx, size_t len, uint64_t longest)
{
    uint32_t tw = ig_index_token_width(sh->idx);
    char *pre = NULL, *post = NULL;
    size_t lp = 0, lq = 0, split = len - (size_t)longest * tw;
    if (!ig_tokens_text(sh->idx, ctx, split, "<end>", &pre, &lp, NULL) &&
        !ig_tokens_text(sh->idx, ctx + split, len - split, "<end>", &post, &lq, NULL)) {
        char *qa = sh_quote(pre, lp), *qb = sh_quote(post, lq);
        if (qa && qb) {
            qa[strlen(qa) - 1] = '\0';
            sh_printf(sh, "context: %s%s%s%s\n", qa, sh_c(sh, SH_HL), qb + 1, sh_c(sh, SH_RESET));
        }
        free(qa);
        free(qb);
    }
    free(pre);
    free(post);
}

/* "ID \"text\"" of a token (its tw little-endian bytes at b) into buf. */
void sh_token_label(shell *sh, const uint8_t *b, uint32_t tw, char *buf, size_t n)
{
    char text[128];
    uint32_t id = ig_token_at(b, tw);
    ig_token_text(sh->idx, id, text, sizeof text);
    char *q = sh_quote(text, strlen(text));
    snprintf(buf, n, "%" PRIu32 " %s", id, q ? q : "");
    free(q);
}
