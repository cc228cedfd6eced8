/* Shared helpers of the benchmark programs; see bench_common.h. */
#include "bench_common.h"
#include "infinigram/text.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "infinigram/text.h"
#include "infinigram/index.h"

#ifndef IG_BENCH_BUILDTYPE
#define IG_BENCH_BUILDTYPE "unknown"
#endif

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    if (q <= 0)
        return v[0];
    if (q >= 1)
        return v[n - 1];
    /* nearest rank: the smallest value with at least q*n values <= it */
    size_t k = (size_t)(q * (double)n + 0.999999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

double bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t bench_fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

char *bench_mkdtemp(const char *tag)
{
    const char *base = getenv("IG_BENCH_TMP");
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t n = strlen(base) + strlen(tag) + 32;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s/ig-bench-%s-XXXXXX", base, tag);
    if (!mkdtemp(p)) {
        fprintf(stderr, "bench: mkdtemp %s: %s\n", p, strerror(errno));
        free(p);
        return NULL;
    }
    return p;
}

static int rm_visit(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int bench_rmtree(const char *path)
{
    return nftw(path, rm_visit, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

static uint64_t g_apparent, g_allocated;
static size_t g_nfiles;

static int size_visit(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) {
        g_apparent += (uint64_t)sb->st_size;
        g_allocated += (uint64_t)sb->st_blocks * 512u;
        g_nfiles++;
    }
    return 0;
}

int bench_dir_size(const char *dir, uint64_t *apparent, uint64_t *allocated, size_t *nfiles)
{
    g_apparent = g_allocated = 0;
    g_nfiles = 0;
    int rc = nftw(dir, size_visit, 16, FTW_PHYS);
    *apparent = g_apparent;
    *allocated = g_allocated;
    if (nfiles)
        *nfiles = g_nfiles;
    return rc == 0 ? 0 : -1;
}

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        close(fd);
        return -1;
    }
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(p);
        return -1;
    }
    *out = p;
    *len = n;
    return 0;
}

int bench_corpus_shakespeare(bench_corpus *c, const char *path)
{
    memset(c, 0, sizeof *c);
    if (!path)
        path = IG_BENCH_DATASET;
    snprintf(c->name, sizeof c->name, "tinyshakespeare");
    snprintf(c->path, sizeof c->path, "%s", path);
    if (read_whole(path, &c->data, &c->len) != 0) {
        fprintf(stderr, "bench: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    c->nfiles = 1;
    c->hash = bench_fnv1a(c->data, c->len);
    return 0;
}

/* ---- usr-include corpus ---- */

static char **g_paths;
static size_t g_npaths, g_cap;

static int list_visit(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || !S_ISREG(sb->st_mode) || n < 2 || strcmp(path + n - 2, ".h") != 0)
        return 0;
    if (g_npaths == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 1024;
        char **p = realloc(g_paths, cap * sizeof *p);
        if (!p)
            return -1;
        g_paths = p;
        g_cap = cap;
    }
    if (!(g_paths[g_npaths] = strdup(path)))
        return -1;
    g_npaths++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int bench_corpus_usr_include(bench_corpus *c, const char *tmpdir, size_t max_bytes,
                             size_t min_bytes)
{
    return bench_corpus_headers(c, "/usr/include", tmpdir, max_bytes, min_bytes);
}

int bench_corpus_headers(bench_corpus *c, const char *root, const char *tmpdir, size_t max_bytes,
                         size_t min_bytes)
{
    memset(c, 0, sizeof *c);
    if (!strcmp(root, "/usr/include")) {
        snprintf(c->name, sizeof c->name, "usr-include");
    } else { /* named after the tree's last component, so that a table says which tree it was */
        size_t n = strlen(root);
        while (n > 1 && root[n - 1] == '/')
            n--;
        size_t b = n;
        while (b > 0 && root[b - 1] != '/')
            b--;
        snprintf(c->name, sizeof c->name, "%.*s-h", (int)(n - b < 20 ? n - b : 20), root + b);
    }
    snprintf(c->path, sizeof c->path, "%s/headers.txt", tmpdir);
    c->is_temp = 1;
    g_paths = NULL;
    g_npaths = g_cap = 0;
    int rc = -1;
    if (nftw(root, list_visit, 32, FTW_PHYS) != 0) {
        fprintf(stderr, "bench: cannot walk %s\n", root);
        goto out;
    }
    qsort(g_paths, g_npaths, sizeof *g_paths, cmp_str);
    c->data = malloc(max_bytes ? max_bytes : 1);
    if (!c->data)
        goto out;
    for (size_t i = 0; i < g_npaths; i++) {
        uint8_t *p;
        size_t n, bad;
        if (read_whole(g_paths[i], &p, &n) != 0)
            continue;
        if (!ig_utf8_valid(p, n, &bad) || memchr(p, 0, n) || memchr(p, 0xFF, n)) {
            c->nskipped++;
            free(p);
            continue;
        }
        if (c->len + n > max_bytes) {
            free(p);
            break;
        }
        memcpy(c->data + c->len, p, n);
        c->len += n;
        c->nfiles++;
        free(p);
    }
    if (c->len < min_bytes) {
        fprintf(stderr, "bench: %s gives only %zu bytes of valid UTF-8 headers (need %zu)\n", root,
                c->len, min_bytes);
        goto out;
    }
    FILE *f = fopen(c->path, "wb");
    if (!f || fwrite(c->data, 1, c->len, f) != c->len || fclose(f) != 0) {
        fprintf(stderr, "bench: cannot write %s\n", c->path);
        goto out;
    }
    c->hash = bench_fnv1a(c->data, c->len);
    rc = 0;
out:
    for (size_t i = 0; i < g_npaths; i++)
        free(g_paths[i]);
    free(g_paths);
    g_paths = NULL;
    return rc;
}

void bench_corpus_free(bench_corpus *c)
{
    if (c->is_temp && c->path[0])
        unlink(c->path);
    free(c->data);
    memset(c, 0, sizeof *c);
}

void bench_machine(char *buf, size_t n)
{
    char model[256] = "unknown", line[512];
    long ram_kb = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "model name", 10)) {
                char *p = strchr(line, ':');
                if (p) {
                    p += 1 + (p[1] == ' ');
                    p[strcspn(p, "\n")] = 0;
                    snprintf(model, sizeof model, "%s", p);
                }
                break;
            }
        }
        fclose(f);
    }
    f = fopen("/proc/meminfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %ld kB", &ram_kb) == 1)
                break;
        fclose(f);
    }
    for (char *p = model; *p; p++)
        if (*p == '"' || *p == '\\')
            *p = '\'';
    snprintf(buf, n, "%s, %ld cpus, %.1f GiB RAM", model, sysconf(_SC_NPROCESSORS_ONLN),
             (double)ram_kb / (1024.0 * 1024.0));
}

const char *bench_build_type(void)
{
    return IG_BENCH_BUILDTYPE;
}

static void json_string(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
}

void bench_result_begin(const char *name, int argc, char **argv)
{
    char machine[512], date[32];
    bench_machine(machine, sizeof machine);
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tm));
    double load = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = 0;
        fclose(f);
    }
    const char *base = strrchr(argv[0], '/');
    printf("RESULT %s {\"buildtype\":\"%s\",\"machine\":\"%s\",\"date\":\"%s\",\"load_average\":%.2f,"
           "\"command\":\"", name, bench_build_type(), machine, date, load);
    json_string(base ? base + 1 : argv[0]);
    for (int i = 1; i < argc; i++) {
        int quote = argv[i][0] == 0 || strpbrk(argv[i], " \t'\"$*?") != NULL;
        printf(quote ? " '" : " ");
        json_string(argv[i]);
        printf(quote ? "'" : "");
    }
    printf("\"");
}

uint64_t bench_rnd(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}
