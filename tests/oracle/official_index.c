/*
 * official_index: writes an official-layout infini-gram index (official_writer.h) from a
 * file, for checking against the official engine and for the side-by-side benchmark.
 *
 *   official_index [--width 1|2|4] [--ptr 0..5] [--v6] [--shards N] [--metadata]
 *                  [--unigram] [--reversed] (--bytes FILE | --ids FILE) OUT
 *
 * --bytes FILE: the whole file is one document of byte tokens (width 1).
 * --ids FILE:   one document per line, token ids in decimal separated by spaces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "official_writer.h"
#include "util/util.h"

static int usage(void)
{
    fprintf(stderr, "usage: official_index [--width 1|2|4] [--ptr 0..5] [--v6] [--shards N] [--metadata] "
                    "[--unigram] [--reversed] (--bytes FILE | --ids FILE) OUT\n");
    return 2;
}

/* Documents of an --ids file: one line each. */
static int parse_ids(char *text, official_doc **out, size_t *n_out)
{
    size_t n = 0, cap = 0;
    official_doc *docs = NULL;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        uint32_t *ids = NULL;
        size_t len = 0, idcap = 0;
        for (char *p = line; *p;) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p) {
                if (*p != ' ')
                    return fprintf(stderr, "official_index: bad id at \"%.20s\"\n", p), -1;
                p++;
                continue;
            }
            if (errno || v > UINT32_MAX || igi_grow(&ids, len, &idcap, sizeof *ids, 16) != 0)
                return fprintf(stderr, "official_index: id out of range or out of memory\n"), -1;
            ids[len++] = (uint32_t)v;
            p = end;
        }
        if (igi_grow(&docs, n, &cap, sizeof *docs, 16) != 0)
            return fprintf(stderr, "official_index: out of memory\n"), -1;
        docs[n++] = (official_doc){ids, len};
        if (!nl)
            break;
        line = nl + 1;
    }
    *out = docs;
    *n_out = n;
    return 0;
}

int main(int argc, char **argv)
{
    official_opts o = {.token_width = 1, .layout = OFFICIAL_V4, .shards = 1};
    const char *bytes = NULL, *ids = NULL;
    int i = 1;
    for (; i < argc - 1; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--width") && i + 1 < argc - 1)
            o.token_width = atoi(argv[++i]);
        else if (!strcmp(a, "--ptr") && i + 1 < argc - 1)
            o.ptr_width = atoi(argv[++i]);
        else if (!strcmp(a, "--shards") && i + 1 < argc - 1)
            o.shards = (size_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--v6"))
            o.layout = OFFICIAL_V6;
        else if (!strcmp(a, "--metadata"))
            o.metadata = true;
        else if (!strcmp(a, "--unigram"))
            o.unigram = true;
        else if (!strcmp(a, "--reversed"))
            o.reversed = true;
        else if (!strcmp(a, "--bytes") && i + 1 < argc - 1)
            bytes = argv[++i];
        else if (!strcmp(a, "--ids") && i + 1 < argc - 1)
            ids = argv[++i];
        else
            return usage();
    }
    if (i != argc - 1 || !bytes == !ids)
        return usage();

    ig_error e = {0};
    char *text = NULL;
    size_t len = 0;
    if (igi_read_file(bytes ? bytes : ids, SIZE_MAX, &text, &len, &e) != 0)
        return fprintf(stderr, "official_index: %s\n", e.msg), 1;
    official_doc *docs = NULL;
    size_t n = 0;
    int rc = 1;
    if (bytes) {
        /* widen the bytes to ids: the writer takes one id array per document */
        uint32_t *b = malloc((len ? len : 1) * sizeof *b);
        docs = malloc(sizeof *docs);
        if (!b || !docs) {
            free(b);
            fprintf(stderr, "official_index: out of memory\n");
            goto out;
        }
        for (size_t k = 0; k < len; k++)
            b[k] = (uint8_t)text[k];
        docs[0] = (official_doc){b, len};
        n = 1;
        o.token_width = 1;
    } else if (parse_ids(text, &docs, &n) != 0) {
        goto out;
    }
    if (official_write(argv[argc - 1], docs, n, &o, &e) != 0)
        fprintf(stderr, "official_index: %s\n", e.msg);
    else
        rc = 0;
out:
    for (size_t d = 0; d < n; d++)
        free((void *)docs[d].ids);
    free(docs);
    free(text);
    return rc;
}
