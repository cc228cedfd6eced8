/*
 * Dataset handles: every built dataset's index, opened once and shared by all request
 * threads. When the catalog changes (another shell rebuilt or removed a dataset), the
 * new index is opened and the old one is closed once the requests using it finish.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int srv_allowed(const server *s, const char *name)
{
    if (!s->allow)
        return 1;
    for (size_t i = 0; i < s->nallow; i++)
        if (!strcmp(s->allow[i], name))
            return 1;
    return 0;
}

static void ds_free(srv_ds *d)
{
    ig_index_close(&d->idx);
    free(d->name);
    free(d->path);
    free(d->why);
    free(d);
}

static void ds_free_list(srv_ds **list)
{
    while (*list) {
        srv_ds *x = *list;
        *list = x->next;
        ds_free(x);
    }
}

void srv_refresh(server *s, int force)
{
    int64_t v = ig_catalog_data_version(s->cfg->cat);
    /* a dataset that could not be opened (too many open files, a moment of memory) is tried
     * again a second later, not only at the catalog's next change */
    int retry = s->retry_at > 0 && srv_now() >= s->retry_at, changed = v != s->data_version;
    if (!force && !changed && !retry)
        return;
    s->data_version = v;
    s->retry_at = 0;
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (ig_catalog_list(s->cfg->cat, &list, &n, &e))
        return;
    ds_free_list(&s->unloadable); /* tried again below */
    /* retire entries whose dataset vanished or whose index changed */
    for (srv_ds **pp = &s->live; *pp;) {
        srv_ds *d = *pp;
        const char *now = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(list[i].name, d->name))
                now = list[i].index_key;
        if (now && !strcmp(now, d->path)) {
            pp = &d->next;
            continue;
        }
        *pp = d->next;
        if (d->refs == 0) {
            ds_free(d);
        } else {
            d->retired = 1;
            d->next = s->retired;
            s->retired = d;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!list[i].index_key || !srv_allowed(s, list[i].name))
            continue;
        int have = 0;
        for (srv_ds *d = s->live; d; d = d->next)
            have |= !strcmp(d->name, list[i].name);
        if (have)
            continue;
        srv_ds *d = calloc(1, sizeof *d);
        if (!d || ig_catalog_open_index(s->cfg->cat, list[i].name, &d->idx, &d->path, &e)) {
            /* said once per change of the catalog; requests for it are answered with why until it loads */
            s->retry_at = srv_now() + 1;
            if (d && s->cfg->log && changed) {
                fprintf(s->cfg->log, "warning: dataset %s cannot be served: %s\n", list[i].name, e.msg);
                fflush(s->cfg->log);
            }
            if (d) {
                free(d->path);
                d->path = NULL;
                d->name = strdup(list[i].name);
                d->why = strdup(e.msg);
                d->code = e.code;
                if (d->name && d->why) {
                    d->next = s->unloadable;
                    s->unloadable = d;
                    continue;
                }
                ds_free(d);
            }
            continue;
        }
        d->tokens = ig_index_token_width(d->idx) != 0;
        d->name = strdup(list[i].name);
        if (!d->name || !d->path) {
            ds_free(d);
            continue;
        }
        d->next = s->live;
        s->live = d;
    }
    ig_dataset_list_free(list, n);
}

const srv_ds *srv_unloadable(const server *s, const char *name)
{
    const srv_ds *d = name ? s->unloadable : NULL;
    while (d && strcmp(d->name, name))
        d = d->next;
    return d;
}

srv_ds *srv_acquire(server *s, const char *name, ig_error *why)
{
    pthread_mutex_lock(&s->mu);
    srv_refresh(s, 0);
    srv_ds *found = NULL, *only = NULL;
    const srv_ds *u;
    int count = 0;
    for (srv_ds *d = s->live; d; d = d->next) {
        count++;
        only = d;
        if (name && !strcmp(d->name, name))
            found = d;
    }
    if (!name && count == 1)
        found = only; /* one dataset served: it is the default */
    if (found)
        found->refs++;
    else if ((u = srv_unloadable(s, name))) /* a built dataset whose index does not open: why, not "unknown" */
        ig_error_set(why, u->code, "%s", u->why);
    else if (!name && !count)
        ig_error_set(why, IG_ENOTFOUND, "no dataset is served (none is built, or none that --datasets names)");
    else
        ig_error_clear(why); /* not served: no reason beyond that */
    pthread_mutex_unlock(&s->mu);
    if (found && found->tokens && ig_index_changed(found->idx, why)) { /* an attached index's files changed under us */
        why->code = IG_ECORRUPT; /* not to be retried: the dataset must be loaded again */
        srv_release(s, found);
        return NULL;
    }
    return found;
}

reply srv_unavailable(const char *name, const char *field, const ig_error *why)
{
    /* a dataset named by another field than the request's own says which ("eval_dataset") */
    char from[64] = "";
    if (strcmp(field, "dataset") && strcmp(field, "model"))
        snprintf(from, sizeof from, " (%s)", field);
    if (!name && why->code == IG_ENOTFOUND)
        return srv_error(404, "not_found", "%s", why->msg);
    if (!why->code)
        return name ? srv_error(404, "not_found", "unknown or unbuilt dataset \"%s\"%s", name, from)
                    : srv_error(400, "usage", "\"%s\" is required (several datasets are served)", field);
    if (srv_passing(why->code))
        return srv_error(503, "busy", "dataset \"%s\"%s cannot be opened just now: %s (try again)", name, from,
                         why->msg);
    return srv_error(409, "corrupt", "dataset \"%s\"%s: %s", name ? name : "", from, why->msg);
}

int srv_name_bad(const char *field, const char *p, size_t n, reply *r)
{
    if (!memchr(p, 0, n))
        return 0;
    *r = srv_error(400, "usage", "\"%s\": a dataset name cannot hold a NUL byte", field);
    return 1;
}

void srv_release(server *s, srv_ds *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&s->mu);
    if (--d->refs == 0 && d->retired) {
        for (srv_ds **pp = &s->retired; *pp; pp = &(*pp)->next)
            if (*pp == d) {
                *pp = d->next;
                break;
            }
        ds_free(d);
    }
    pthread_mutex_unlock(&s->mu);
}

int srv_datasets_init(server *s, const srv_config *cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    pthread_mutex_init(&s->mu, NULL);
    if (cfg->datasets) {
        char *copy = strdup(cfg->datasets), *save = NULL;
        if (!copy)
            return -1;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            ig_dataset d;
            ig_error e;
            if (ig_catalog_get(cfg->cat, w, &d, &e)) { /* a typo would serve nothing, silently */
                fprintf(cfg->log, "error: serve --datasets: %s\n", e.msg);
                free(copy);
                return -2;
            }
            ig_dataset_free(&d);
            char **a = realloc(s->allow, (s->nallow + 1) * sizeof *s->allow);
            if (!a || !(a[s->nallow] = strdup(w))) {
                s->allow = a ? a : s->allow;
                free(copy);
                return -1;
            }
            s->allow = a;
            s->nallow++;
        }
        free(copy);
        if (!s->nallow) {
            fprintf(cfg->log, "error: serve --datasets names no dataset\n");
            return -2;
        }
    }
    srv_refresh(s, 1);
    return 0;
}

void srv_datasets_free(server *s)
{
    ds_free_list(&s->live);
    ds_free_list(&s->retired);
    ds_free_list(&s->unloadable);
    for (size_t i = 0; i < s->nallow; i++)
        free(s->allow[i]);
    free(s->allow);
    pthread_mutex_destroy(&s->mu);
}
