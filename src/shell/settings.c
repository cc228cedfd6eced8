/*
 * Settings: rows of one table (key, default, help, validator), persisted in the catalog
 * and read once into the session. Interactive sessions start from the saved values;
 * scripts (-c, -f, piped input) and the server start from the defaults, so that they
 * print the same on every machine, unless --saved-settings asks for the saved values (as
 * psql's -X and sqlite3's -init choose an rc file). Settings named like an operation's
 * field (width, max-context) are that field's default: a command-line option beats
 * `:set` in this session, which beats the saved value, which beats the default.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell.h"

static int check_onoff(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "on") || !strcmp(v, "off"))
        return 0;
    snprintf(why, n, "expected on or off");
    return -1;
}

static int check_format(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "table") || !strcmp(v, "json"))
        return 0;
    snprintf(why, n, "expected table or json");
    return -1;
}

static int check_color(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "auto") || !strcmp(v, "on") || !strcmp(v, "off"))
        return 0;
    snprintf(why, n, "expected auto, on or off");
    return -1;
}

/* A setting that is an operation's field's default takes what the field takes, with its
 * bounds: the first operation with that field checks it, as its setter would at each command. */
static int check_field(const char *name, const char *v, char *why, size_t n)
{
    for (const ig_op *const *p = ig_ops(); *p; p++) {
        const ig_field *f = ig_field_find((*p)->fields, name, strlen(name));
        if (!f)
            continue;
        void *opts = calloc(1, (*p)->opts_size);
        ig_error e;
        int rc = opts ? ig_field_set_text(f, opts, (const uint8_t *)v, strlen(v), &e) : ig_error_set(&e, IG_ENOMEM, "out of memory");
        if (opts)
            ig_fields_free((*p)->fields, opts);
        free(opts);
        if (rc)
            snprintf(why, n, "%s", e.msg);
        return rc ? -1 : 0;
    }
    snprintf(why, n, "no command takes it");
    return -1;
}

static int check_width(const char *v, char *why, size_t n) { return check_field("width", v, why, n); }

static int check_context(const char *v, char *why, size_t n)
{
    return strcmp(v, "none") ? check_field("max_context", v, why, n) : 0;
}

static int check_size(const char *v, char *why, size_t n)
{
    uint64_t s;
    if (!sh_parse_size(v, &s))
        return 0;
    snprintf(why, n, "expected a size such as 64M or 1G");
    return -1;
}

const sh_setting sh_settings[] = {
    {"format", "table", "output format: table or json", "table|json", check_format},
    {"timer", "off", "print the engine time after each command: on or off", "on|off", check_onoff},
    {"color", "auto", "colour: auto (terminal only, honours NO_COLOR), on, off", "auto|on|off", check_color},
    {"width", "30", "bytes of context on each side of snippets", NULL, check_width},
    {"shard-size", "1G", "default shard size for build", NULL, check_size},
    {"max-context", "none", "bytes of context models use (none: each command's own default: all, or 100 for eval)", NULL, check_context},
};
const size_t sh_nsettings = sizeof sh_settings / sizeof sh_settings[0];

const sh_setting *sh_setting_find(const char *key)
{
    for (size_t i = 0; i < sh_nsettings; i++)
        if (!strcmp(sh_settings[i].key, key))
            return &sh_settings[i];
    return NULL;
}

char *sh_setting_value(shell *sh, const char *key)
{
    const sh_setting *s = sh_setting_find(key);
    if (!s)
        return strdup("");
    size_t i = (size_t)(s - sh_settings);
    return strdup(sh->settings && sh->settings[i] ? sh->settings[i] : s->def);
}

int sh_setting_session_set(shell *sh, const sh_setting *s, const char *v)
{
    char *copy = strdup(v);
    if (!copy)
        return -1;
    size_t i = (size_t)(s - sh_settings);
    free(sh->settings[i]);
    sh->settings[i] = copy;
    sh_setting_apply(sh, s->key, v);
    return 0;
}

int sh_settings_init(shell *sh, int use_saved)
{
    if (!(sh->settings = calloc(sh_nsettings, sizeof *sh->settings)))
        return -1;
    for (size_t i = 0; i < sh_nsettings; i++) {
        char *v = NULL, why[64];
        ig_error e;
        if (!use_saved || !sh->cat || ig_catalog_setting_get(sh->cat, sh_settings[i].key, &v, &e) || !v ||
            sh_settings[i].check(v, why, sizeof why)) {
            free(v);
            v = NULL;
        }
        /* a setting never set stays NULL: the operations keep their own defaults */
        int rc = v ? sh_setting_session_set(sh, &sh_settings[i], v) : sh_setting_apply(sh, sh_settings[i].key, sh_settings[i].def);
        free(v);
        if (rc)
            return -1;
    }
    return 0;
}

void sh_settings_free(shell *sh)
{
    for (size_t i = 0; sh->settings && i < sh_nsettings; i++)
        free(sh->settings[i]);
    free(sh->settings);
    sh->settings = NULL;
}

int sh_setting_apply(shell *sh, const char *key, const char *v)
{
    if (!strcmp(key, "format"))
        sh->json = !strcmp(v, "json");
    else if (!strcmp(key, "timer"))
        sh->timer = !strcmp(v, "on");
    else if (!strcmp(key, "color")) {
        /* no-color.org: NO_COLOR counts only when set to a non-empty value */
        const char *nc = getenv("NO_COLOR");
        int allowed = !(nc && *nc);
        sh->color = !strcmp(v, "on") || (!strcmp(v, "auto") && allowed && isatty(STDOUT_FILENO));
        sh->err_color = !strcmp(v, "on") || (!strcmp(v, "auto") && allowed && isatty(STDERR_FILENO));
    }
    return 0;
}

