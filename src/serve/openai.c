/*
 * OpenAI-compatible completions: /v1/completions and /v1/chat/completions, the model
 * being a dataset. Options are decoded through a field table like every engine
 * endpoint; OpenAI parameters we do not implement are ignored (listed in
 * `openai_ignored`, served in the HTTP reference) so that real clients keep working,
 * and any other unknown key is a 400. Streaming sends one server-sent event per
 * generated character, then "data: [DONE]"; each streamed choice also carries
 * "effective_n", one number per character of its text (an extension clients ignore), so a
 * front end can show how much corpus context stood behind each character.
 */
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "assets.h"
#include "server.h"
#include "workers.h"

typedef struct comp_opts {
    ig_bytes model;
    uint64_t max_tokens, max_completion_tokens, n, seed;
    double temperature, top_p;
    int64_t top_k, logprobs, top_logprobs, interp, ngram, max_context;
    int echo, stream, chat_logprobs;
    ig_texts stop;
} comp_opts;

/* The most log-probability values (characters × (K + 1)) a non-streamed answer holds. */
#define MAX_LOGPROBS 1000000u

#define F(name, type, member, lo, hi, arg, def, help)                                                                  \
    {name, type, offsetof(comp_opts, member), lo, hi, arg, def, help, NULL, 0}
/* The rows both endpoints share; logprobs differ (an integer K for completions, a switch
 * with top_logprobs for chat, as OpenAI has them) and echo is completions' alone. */
#define COMMON_FIELDS                                                                                                  \
    {"model", IG_FIELD_TEXT, offsetof(comp_opts, model), 0, 0, "NAME", NULL, "the dataset to generate from", NULL,    \
     IG_FIELD_REQUIRED},                                                                                               \
        F("max_tokens", IG_FIELD_UINT, max_tokens, 0, 100000, "N", "16", "characters to generate"),                   \
        F("max_completion_tokens", IG_FIELD_UINT, max_completion_tokens, 0, 100000, "N", NULL,                       \
          "the same as max_tokens (give one of them, or both equal)"),                                                 \
        F("temperature", IG_FIELD_DOUBLE, temperature, 0, 1e6, "T", "1",                                             \
          "0 = greedy; higher flattens the distribution"),                                                             \
        F("top_p", IG_FIELD_DOUBLE, top_p, 1e-9, 1, "P", "1", "sample among the most probable bytes holding mass P"), \
        F("top_k", IG_FIELD_INT, top_k, 0, 256, "K", "0", "sample among the K most probable next bytes (0: all)"),    \
        F("n", IG_FIELD_UINT, n, 1, 16, "N", "1", "choices per prompt"),                                              \
        F("seed", IG_FIELD_UINT, seed, 0, 9007199254740992.0, "S", NULL, "random seed (default: random)"),           \
        F("interp", IG_FIELD_INT, interp, -1, 1000000, "K", "2",                                                     \
          "selective back-off interpolation over K levels (-1: all; 0: the ∞-gram)"),                                 \
        F("ngram", IG_FIELD_INT, ngram, 0, 1000000, "N", "0", "fixed n-gram model instead (0: off)"),                 \
        F("max_context", IG_FIELD_INT, max_context, -1, 1000000000, "L", "-1",                                       \
          "use at most the last L bytes of context"),                                                                  \
        F("stream", IG_FIELD_BOOL, stream, 0, 0, NULL, "false",                                                      \
          "server-sent events, one per character; each chunk also carries \"effective_n\": the model's effective n " \
          "for each of its characters"),                                                                               \
        F("stop", IG_FIELD_TEXTS, stop, 0, 0, "STRING", NULL, "stop strings (a string or a list), not part of the text")
const ig_field srv_completion_fields[] = {
    COMMON_FIELDS,
    F("logprobs", IG_FIELD_INT, logprobs, 0, 20, "K", NULL,
      "per-character log-probabilities (tokens, token_logprobs, top_logprobs, and text_offset counted in characters) "
      "with the K most probable alternatives; unless streamed, at most 1,000,000 values (characters × (K + 1)) an "
      "answer"),
    F("echo", IG_FIELD_BOOL, echo, 0, 0, NULL, "false",
      "include the prompt in the text; with logprobs, its characters as the model reads them come first, each with "
      "its log-probability after those before it (the first: null)"),
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};
const ig_field srv_chat_fields[] = {
    COMMON_FIELDS,
    F("logprobs", IG_FIELD_BOOL, chat_logprobs, 0, 0, NULL, "false",
      "per-character log-probabilities in choices[].logprobs.content ({token, logprob, bytes, top_logprobs})"),
    F("top_logprobs", IG_FIELD_INT, top_logprobs, 0, 20, "K", "0",
      "with logprobs: the K most probable alternatives of each character; unless streamed, at most 1,000,000 "
      "values (characters × (K + 1)) an answer"),
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

/** OpenAI parameters accepted and ignored. */
const char *const srv_openai_ignored[] = {
    "user", "presence_penalty", "frequency_penalty", "logit_bias", "best_of", "suffix",
    "response_format", "service_tier", "store", "metadata", "parallel_tool_calls", "tool_choice", "tools",
    "modalities", "reasoning_effort", "prediction", "audio", "functions", "function_call", NULL,
};

/* The keys a chat message may have: role and content, and OpenAI's others, ignored. */
static const char *const srv_message_keys[] = {
    "role", "content", "name", "refusal", "tool_calls", "tool_call_id", "function_call", "audio", NULL,
};

typedef struct comp_req {
    srv_ds *ds;
    comp_opts opt;
    ig_gen_options o;
    char **prompts;           ///< one per prompt (chat: the joined messages)
    size_t *plens;
    size_t nprompts;
    int listed;               ///< the prompts came as a list
    int chat;
    const ig_field *fields;   ///< srv_chat_fields or srv_completion_fields
    char id[40];
    long created;
    /** The watchdog's flag (may be NULL), raised when the client goes, the deadline passes or
     *  the server stops: the request must stop. */
    const volatile int *cancel;
} comp_req;

static void comp_free(server *s, comp_req *c)
{
    srv_release(s, c->ds);
    c->ds = NULL;
    for (size_t i = 0; i < c->nprompts; i++)
        free(c->prompts[i]);
    free(c->prompts);
    free(c->plens);
    free((void *)c->o.stop);
    if (c->fields)
        ig_fields_free(c->fields, &c->opt);
}

static int add_prompt(comp_req *c, const char *p, size_t n)
{
    char **a = realloc(c->prompts, (c->nprompts + 1) * sizeof *a);
    if (a)
        c->prompts = a;
    size_t *l = realloc(c->plens, (c->nprompts + 1) * sizeof *l);
    if (l)
        c->plens = l;
    char *copy = a && l ? malloc(n + 1) : NULL;
    if (!copy)
        return -1;
    memcpy(copy, p, n);
    copy[n] = '\0';
    c->prompts[c->nprompts] = copy;
    c->plens[c->nprompts++] = n;
    return 0;
}

/* A member present and not null (OpenAI clients send null for an option left unset). */
static int given(json_t *b, const char *key)
{
    json_t *v = json_object_get(b, key);
    return v && !json_is_null(v);
}

/* A message's content onto the prompt: a string, a list of text parts (OpenAI's
 * [{"type": "text", "text": ...}], joined as they come), or null (an assistant turn that
 * only called tools). Other parts (images, audio, files) cannot be read by a model of
 * bytes: a 400 naming the part. -1 with bad->status 0 when memory ran out. */
static int append_content(ig_buf *p, json_t *content, size_t i, reply *bad)
{
    bad->status = 0;
    if (json_is_string(content))
        return ig_buf_append(p, json_string_value(content), json_string_length(content));
    if (json_is_null(content))
        return 0;
    if (!json_is_array(content)) {
        *bad = srv_error(400, "usage", "\"messages[%zu].content\": expected a string or a list of text parts", i);
        return -1;
    }
    size_t j;
    json_t *part;
    json_array_foreach(content, j, part) {
        json_t *type = json_object_get(part, "type"), *text = json_object_get(part, "text");
        if (!json_is_string(type) || strcmp(json_string_value(type), "text") || !json_is_string(text)) {
            *bad = srv_error(400, "usage",
                             "\"messages[%zu].content[%zu]\": only text parts ({\"type\": \"text\", \"text\": "
                             "STRING}) can be read by a model of text",
                             i, j);
            return -1;
        }
        const char *key;
        json_t *val;
        json_object_foreach(part, key, val) /* as a message's own keys: a typo is named, not dropped */
            if (strcmp(key, "type") && strcmp(key, "text")) {
                *bad = srv_error(400, "usage", "\"messages[%zu].content[%zu].%s\": not a key of a text part (type, text)",
                                 i, j, key);
                return -1;
            }
        if (ig_buf_append(p, json_string_value(text), json_string_length(text)))
            return -1;
    }
    return 0;
}

static size_t utf8_chars(const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (s[i] & 0xC0) != 0x80;
    return k;
}

/* Builds the generation request; on error returns a reply with status != 0. */
static reply comp_parse(server *s, json_t *b, int chat, comp_req *c)
{
    memset(c, 0, sizeof *c);
    c->chat = chat;
    c->fields = chat ? srv_chat_fields : srv_completion_fields;
    comp_opts *q = &c->opt;
    ig_error e;
    if (ig_fields_defaults(c->fields, q, &e)) /* the table is the one place a default is written */
        return srv_error_ig(&e);
    q->seed = UINT64_MAX; /* none: a random seed */
    srv_apply_settings(s->cfg, c->fields, q);
    const char *skip_completion[] = {"prompt", NULL}, *skip_chat[] = {"messages", NULL};
    /* the ignored OpenAI parameters, the prompt and stream_options (read by the stream) are not fields */
    size_t nign = 0;
    while (srv_openai_ignored[nign])
        nign++;
    const char **skip = calloc(nign + 3, sizeof *skip);
    if (!skip)
        return srv_error(500, "internal", "out of memory");
    memcpy(skip, srv_openai_ignored, nign * sizeof *skip);
    skip[nign] = chat ? skip_chat[0] : skip_completion[0];
    skip[nign + 1] = "stream_options";
    int rc = ig_fields_from_json(c->fields, q, b, skip, NULL, &e);
    free(skip);
    if (rc)
        return srv_error_ig(&e);
    json_t *so = json_object_get(b, "stream_options"), *iu = json_is_object(so) ? json_object_get(so, "include_usage") : NULL;
    if (so && !json_is_null(so) && !json_is_object(so))
        return srv_error(400, "usage", "\"stream_options\": expected an object ({\"include_usage\": true})");
    if (iu && !json_is_boolean(iu) && !json_is_null(iu))
        return srv_error(400, "usage", "\"stream_options.include_usage\": expected true or false");
    if (so && !json_is_null(so) && !json_is_true(json_object_get(b, "stream")))
        return srv_error(400, "usage", "\"stream_options\": only with \"stream\": true (as OpenAI has it)");
    for (size_t i = 0; i < q->stop.n; i++)
        if (!q->stop.v[i].n)
            return srv_error(400, "usage", "\"stop\": a stop string must not be empty");
    if (q->stop.n > 16)
        return srv_error(400, "usage", "\"stop\": at most 16 stop strings");
    if (q->ngram > 0 && json_object_get(b, "interp")) /* as the engine endpoints: one model a request */
        return srv_error(400, "usage", "choose one model: \"ngram\" cannot be combined with \"interp\"");
    ig_gen_options_default(&c->o);
    if (q->ngram > 0) {
        c->o.model.kind = IG_MODEL_NGRAM;
        c->o.model.n = (uint32_t)q->ngram;
    } else if (q->interp == 0) {
        c->o.model.kind = IG_MODEL_INFGRAM;
    } else {
        c->o.model.interp_k = (int)q->interp;
    }
    c->o.model.max_context = q->max_context;
    if (ig_model_check(&c->o.model, &e))
        return srv_error(400, "usage", "%s", e.msg);
    c->o.temperature = q->temperature;
    c->o.top_p = q->top_p;
    c->o.top_k = (uint32_t)q->top_k;
    c->o.max_chars = q->max_tokens;
    if (given(b, "seed"))
        c->o.seed = q->seed;
    else if (getrandom(&c->o.seed, sizeof c->o.seed, 0) != sizeof c->o.seed)
        c->o.seed = (uint64_t)time(NULL);
    /* max_completion_tokens is the newer spelling of max_tokens: either may be given, both
     * only when they agree (a client setting one for an older server, one for a newer) */
    if (given(b, "max_completion_tokens")) {
        if (given(b, "max_tokens") && q->max_tokens != q->max_completion_tokens)
            return srv_error(400, "usage", "\"max_completion_tokens\": %" PRIu64 " differs from \"max_tokens\": %" PRIu64
                             "; give one of them", q->max_completion_tokens, q->max_tokens);
        q->max_tokens = q->max_completion_tokens;
        c->o.max_chars = q->max_tokens;
    }
    /* logprobs: -1 none, else the number of alternatives each character gets */
    if (chat) {
        if (!q->chat_logprobs && given(b, "top_logprobs"))
            return srv_error(400, "usage", "\"top_logprobs\": needs \"logprobs\": true");
        q->logprobs = q->chat_logprobs ? q->top_logprobs : -1;
    } else if (!given(b, "logprobs")) {
        q->logprobs = -1;
    }
    const char **stops = q->stop.n ? calloc(q->stop.n, sizeof *stops) : NULL;
    if (q->stop.n && !stops)
        return srv_error(500, "internal", "out of memory");
    for (size_t i = 0; i < q->stop.n; i++) {
        if (memchr(q->stop.v[i].p, 0, q->stop.v[i].n)) {
            free(stops);
            return srv_error(400, "usage", "\"stop\": a stop string must not contain a NUL byte");
        }
        stops[i] = (const char *)q->stop.v[i].p;
    }
    c->o.stop = stops;
    c->o.nstop = q->stop.n;
    if (chat) {
        json_t *msgs = json_object_get(b, "messages"), *m;
        size_t i;
        if (!json_is_array(msgs) || json_array_size(msgs) == 0)
            return srv_error(400, "usage", "\"messages\": expected a non-empty list");
        ig_buf p = {0};
        /* the chat template: one "role: content" line per message, then "assistant: " */
        json_array_foreach(msgs, i, m) {
            json_t *role = json_object_get(m, "role");
            const char *key;
            json_t *v;
            json_object_foreach(m, key, v) {
                size_t k = 0;
                while (srv_message_keys[k] && strcmp(srv_message_keys[k], key))
                    k++;
                if (!srv_message_keys[k]) {
                    ig_buf_free(&p);
                    int shown = (int)ig_utf8_prefix((const uint8_t *)key, strlen(key), 64); /* whole characters */
                    return srv_error(400, "usage",
                                     "\"messages[%zu].%.*s\": not a key of a message (role, content; OpenAI's name, "
                                     "refusal, tool_calls, tool_call_id, function_call and audio are read and ignored)",
                                     i, shown, key);
                }
            }
            if (!json_is_string(role)) {
                ig_buf_free(&p);
                return srv_error(400, "usage", "\"messages[%zu]\": needs a string \"role\"", i);
            }
            reply bad = {0, NULL, 0};
            if (ig_buf_append(&p, json_string_value(role), json_string_length(role)) || ig_buf_append(&p, ": ", 2) ||
                append_content(&p, json_object_get(m, "content"), i, &bad) || ig_buf_append(&p, "\n", 1)) {
                ig_buf_free(&p);
                return bad.status ? bad : srv_error(500, "internal", "out of memory");
            }
        }
        int bad = ig_buf_append(&p, "assistant: ", 11) || add_prompt(c, (const char *)p.data, p.len);
        ig_buf_free(&p);
        if (bad)
            return srv_error(500, "internal", "out of memory");
    } else {
        json_t *pr = json_object_get(b, "prompt");
        if (json_is_string(pr)) {
            if (add_prompt(c, json_string_value(pr), json_string_length(pr)))
                return srv_error(500, "internal", "out of memory");
        } else if (json_is_array(pr) && json_array_size(pr) > 0 && json_array_size(pr) <= 64) {
            size_t i;
            json_t *x;
            c->listed = 1;
            json_array_foreach(pr, i, x) {
                if (!json_is_string(x))
                    return srv_error(400, "usage", "\"prompt\": item %zu of the list is not a string", i);
                if (add_prompt(c, json_string_value(x), json_string_length(x)))
                    return srv_error(500, "internal", "out of memory");
            }
        } else if (!pr || json_is_null(pr)) {
            if (add_prompt(c, "", 0))
                return srv_error(500, "internal", "out of memory");
        } else {
            return srv_error(400, "usage", "\"prompt\": expected a string or a list of 1 to 64 strings");
        }
    }
    if (c->nprompts * q->n > 64)
        return srv_error(400, "usage", "\"n\": at most 64 choices in all (prompts × n)");
    const char *model = (const char *)q->model.p;
    reply bad;
    if (srv_name_bad("model", (const char *)q->model.p, q->model.n, &bad))
        return bad;
    ig_error why;
    c->ds = srv_acquire(s, model, &why);
    if (!c->ds)
        return srv_unavailable(model, "model", &why);
    if (ig_index_token_width(c->ds->idx)) /* comp_free releases the dataset */
        return srv_error(400, "usage", "dataset \"%s\" holds token ids: completions do not run on token datasets yet "
                                       "(count, predict, prob, backoff, generate, explain, spans, eval, search, mix and doc do)", model);
    /* The prompts as the model reads them (NFC; folded on a case-folded dataset): what is
     * generated after, echoed, scored and counted. */
    for (size_t i = 0; i < c->nprompts; i++) {
        uint8_t *np = NULL;
        size_t nlen = 0;
        if (ig_query_normalize(c->ds->idx, (const uint8_t *)c->prompts[i], c->plens[i], &np, &nlen, &e))
            return srv_error_ig(&e);
        char *z = realloc(np, nlen + 1);
        if (!z) {
            free(np);
            return srv_error(500, "internal", "out of memory");
        }
        z[nlen] = '\0';
        free(c->prompts[i]);
        c->prompts[i] = z;
        c->plens[i] = nlen;
    }
    /* An answer is held whole until it is written, and each character's log-probabilities
     * are JSON values (K + 1 of them, near 100 bytes each): 64 choices of 100,000 characters
     * with 20 alternatives would take gigabytes. A stream sends each character as it goes,
     * but an echoed prompt's in one event. */
    if (q->logprobs >= 0) {
        uint64_t chars = 0, longest_echo = 0;
        for (size_t i = 0; i < c->nprompts; i++) {
            uint64_t pc = q->echo ? utf8_chars((const uint8_t *)c->prompts[i], c->plens[i]) : 0;
            if (pc > longest_echo)
                longest_echo = pc;
            if (!q->stream)
                chars += (q->max_tokens + pc) * q->n;
            else if (pc > chars)
                chars = pc;
        }
        if (chars * (uint64_t)(q->logprobs + 1) > MAX_LOGPROBS)
            return srv_error(400, "usage",
                             "\"%s\": %" PRIu64 " characters with %" PRId64 " log-probabilities each exceed the %u "
                             "an answer may hold; ask for fewer alternatives, characters or choices%s",
                             chat ? "top_logprobs" : "logprobs", chars, q->logprobs + 1, MAX_LOGPROBS,
                             !q->stream && longest_echo * (uint64_t)(q->logprobs + 1) <= MAX_LOGPROBS ? ", or stream"
                                                                                                     : "");
    }
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != sizeof r)
        r = (uint64_t)time(NULL);
    snprintf(c->id, sizeof c->id, "%scmpl-%016" PRIx64, chat ? "chat" : "", s->cfg->fake_clock ? (uint64_t)0 : r);
    c->created = s->cfg->fake_clock ? 0 : (long)time(NULL);
    return (reply){0, NULL, 0};
}

/* Starts choice k of a prompt: a generator with the choice's own reproducible seed, after
 * the prompt (normalized by comp_parse, as every other face gives text to the engine); `ctx`
 * (the caller's, empty) receives that prompt, after which the alternatives of the first
 * character are predicted. */
static int choice_start(const comp_req *c, size_t prompt, unsigned k, ig_gen **g, ig_buf *ctx, ig_error *e)
{
    ig_gen_options o = c->o;
    o.seed = c->o.seed + k;
    const uint8_t *p = (const uint8_t *)c->prompts[prompt];
    int rc = ig_gen_start(g, c->ds->idx, &o, p, c->plens[prompt], e);
    if (!rc && ig_buf_append(ctx, p, c->plens[prompt])) {
        ig_gen_free(g);
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    }
    return rc;
}

/* Refuses, before anything is generated or a stream begins, a prompt after which the model
 * gives no next character: an empty 200 would look like a generation that chose to stop.
 * Whether a first character exists does not depend on the seed (only which one), so one
 * start per prompt decides for all its choices. Interpolation never backs off to the
 * unigram, so it has nothing to say after an empty prompt; the ∞-gram always has. */
static reply comp_check_prompts(server *s, comp_req *c)
{
    if (!c->opt.max_tokens)
        return (reply){0, NULL, 0};
    for (size_t i = 0; i < c->nprompts; i++) {
        ig_gen *g = NULL;
        ig_buf ctx = {0};
        ig_gen_step st;
        ig_error e;
        int r = choice_start(c, i, 0, &g, &ctx, &e);
        if (!r)
            r = ig_gen_next(g, &st, &e);
        ig_gen_free(&g);
        ig_buf_free(&ctx);
        if (r < 0) /* a check that ran into the deadline (a long prompt's prediction) was cancelled */
            return srv_flag_up(c->cancel) ? srv_cancelled(s) : srv_error_ig(&e);
        if (r == IG_STOP_NO_CONTINUATION && c->o.model.kind != IG_MODEL_INFGRAM) {
            char field[32];
            if (c->chat || !c->listed)
                snprintf(field, sizeof field, "%s", c->chat ? "messages" : "prompt");
            else
                snprintf(field, sizeof field, "prompt[%zu]", i);
            return srv_error(400, "usage",
                             "\"%s\": the model has nothing to continue %s with (no estimate, or only the end of a "
                             "document; %s never backs off to the unigram): give a prompt whose end occurs in the "
                             "corpus, or use \"interp\": 0 (the ∞-gram)",
                             field, c->plens[i] ? "this prompt" : "an empty prompt",
                             c->o.model.kind == IG_MODEL_INTERP ? "interpolation" : "this model");
        }
    }
    return (reply){0, NULL, 0};
}

/* An empty logprobs object in the endpoint's shape: chat {"content": [], "refusal": null},
 * completions {"tokens", "token_logprobs", "top_logprobs", "text_offset"} (four lists). */
static json_t *lp_new(int chat)
{
    if (chat)
        return json_pack("{s:[],s:n}", "content", "refusal");
    return json_pack("{s:[],s:[],s:[],s:[]}", "tokens", "token_logprobs", "top_logprobs", "text_offset");
}

/* {"token", "logprob", "bytes"} of one character (log of 0 given as -1e30: JSON has no -inf). */
static json_t *lp_token(const uint8_t *b, size_t n, double prob)
{
    json_t *bytes = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(bytes, json_integer(b[i]));
    return json_pack("{s:s%,s:f,s:o}", "token", (const char *)b, n, "logprob", prob > 0 ? log(prob) : -1e30, "bytes",
                     bytes);
}

/* The entry of character ch[0, chlen) after ctx[0, n), in chat's shape: its token, logprob and
 * bytes, and "top_logprobs": the c->opt.logprobs most probable characters there under the
 * request's model (characters that are not text, such as the end of a document, left out).
 * `prob` is the character's probability, or -1 to work it out. Both are the probabilities a
 * character is generated with: the product of its bytes' (ig_prob, ig_next_chars), so a
 * character listed among the alternatives has the logprob it has as the token. */
static json_t *lp_char(const comp_req *c, const uint8_t *ctx, size_t n, const uint8_t *ch, size_t chlen, double prob)
{
    json_t *alts = json_array();
    ig_error e;
    if (prob < 0) {
        ig_factor *f = NULL;
        size_t nf = 0;
        double l2;
        if (ig_prob(c->ds->idx, &c->o.model, ctx, n, ch, chlen, 0, &f, &nf, &prob, &l2, &e))
            prob = -1;
        free(f);
    }
    ig_symbol *sy = NULL;
    size_t ns = 0;
    /* a distribution for each multi-byte prefix the search opens: 4 for each character asked
     * for covers all but the flattest mixtures, and bounds the time of a request */
    if (c->opt.logprobs > 0 &&
        !ig_next_chars(c->ds->idx, &c->o.model, ctx, n, (size_t)c->opt.logprobs, 4 * (size_t)c->opt.logprobs + 4, &sy,
                       &ns, &e))
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(alts, lp_token(sy[i].bytes, sy[i].len, sy[i].prob));
    free(sy);
    json_t *entry = lp_token(ch, chlen, prob < 0 ? 0 : prob);
    json_object_set_new(entry, "top_logprobs", alts);
    return entry;
}

static json_t *lp_entry(const comp_req *c, const ig_buf *ctx, const ig_gen_step *st)
{
    return lp_char(c, ctx->data, ctx->len, st->bytes, st->len, st->prob);
}

/* Adds an entry (consumed) for the character at `offset`, counted in characters of the
 * choice's text (as OpenAI clients index the text: by character, not byte). */
static void lp_add(json_t *lp, int chat, json_t *entry, size_t offset)
{
    if (!lp || !entry) {
        json_decref(entry);
        return;
    }
    if (chat) {
        json_array_append_new(json_object_get(lp, "content"), entry);
        return;
    }
    json_t *alts = json_object(), *x;
    size_t i;
    json_array_foreach(json_object_get(entry, "top_logprobs"), i, x) { /* a NUL is text too: keys by length */
        json_t *tok = json_object_get(x, "token");
        json_object_setn(alts, json_string_value(tok), json_string_length(tok), json_object_get(x, "logprob"));
    }
    json_array_append(json_object_get(lp, "tokens"), json_object_get(entry, "token"));
    json_array_append(json_object_get(lp, "token_logprobs"), json_object_get(entry, "logprob"));
    json_array_append_new(json_object_get(lp, "top_logprobs"), alts);
    json_array_append_new(json_object_get(lp, "text_offset"), json_integer((json_int_t)offset));
    json_decref(entry);
}

/* With echo, the prompt's entries ahead of the generated ones, as OpenAI lists them: one per
 * character of the prompt (as the model reads it, as it is echoed), each with its
 * log-probability after the characters before it; the first has none (null). 0, or 1 when
 * the request was stopped meanwhile. */
static int lp_prompt(const comp_req *c, size_t prompt, json_t *lp)
{
    const uint8_t *np = (const uint8_t *)c->prompts[prompt];
    size_t nlen = c->plens[prompt];
    size_t k = 0;
    for (size_t i = 0; i < nlen; k++) {
        if (srv_flag_up(c->cancel))
            return 1;
        size_t len = 1;
        while (i + len < nlen && (np[i + len] & 0xC0) == 0x80)
            len++;
        if (i == 0) {
            json_t *first = lp_token(np, len, 1);
            json_object_set_new(first, "logprob", json_null());
            json_object_set_new(first, "top_logprobs", json_null());
            if (json_object_get(lp, "content")) {
                json_array_append_new(json_object_get(lp, "content"), first);
            } else {
                json_array_append(json_object_get(lp, "tokens"), json_object_get(first, "token"));
                json_array_append_new(json_object_get(lp, "token_logprobs"), json_null());
                json_array_append_new(json_object_get(lp, "top_logprobs"), json_null());
                json_array_append_new(json_object_get(lp, "text_offset"), json_integer(0));
                json_decref(first);
            }
        } else {
            lp_add(lp, c->chat, lp_char(c, np, i, np + i, len, -1), k);
        }
        i += len;
    }
    return 0;
}

/* One generated choice: text (the generator's final text, stop strings withdrawn), finish
 * reason, and logprobs if asked (*lp, NULL when not). 0, or -1 with the error in *e. */
static int run_choice(comp_req *c, size_t prompt, unsigned k, ig_buf *text, const char **finish, json_t **lp,
                      ig_error *e)
{
    ig_gen *g = NULL;
    *lp = c->opt.logprobs >= 0 ? lp_new(c->chat) : NULL;
    *finish = "stop";
    if (c->opt.echo)
        ig_buf_append(text, c->prompts[prompt], c->plens[prompt]);
    if (c->opt.echo && *lp && lp_prompt(c, prompt, *lp))
        return 0; /* stopped: the caller answers so */
    size_t echoed = *lp ? json_array_size(json_object_get(*lp, c->chat ? "content" : "tokens")) : 0;
    ig_buf ctx = {0};
    if (choice_start(c, prompt, k, &g, &ctx, e)) {
        ig_buf_free(&ctx);
        return -1;
    }
    size_t shown = utf8_chars(text->data, text->len); /* characters of the text so far */
    ig_gen_step st;
    int r;
    while ((r = ig_gen_next(g, &st, e)) == IG_STOP_NONE) {
        if (srv_flag_up(c->cancel)) {
            r = IG_STOP_CANCELLED;
            break;
        }
        if (*lp)
            lp_add(*lp, c->chat, lp_entry(c, &ctx, &st), shown);
        shown++;
        ig_buf_append(&ctx, st.bytes, st.len);
    }
    if (r < 0) {
        ig_gen_free(&g);
        ig_buf_free(&ctx);
        return -1;
    }
    if (r == IG_STOP_MAX)
        *finish = "length";
    else if (r == IG_STOP_CANCELLED)
        *finish = "cancelled";
    size_t gl;
    const uint8_t *gt = ig_gen_text(g, &gl);
    ig_buf_append(text, gt, gl);
    if (*lp) { /* characters withdrawn with a stop string leave the logprobs too */
        size_t keep = echoed + utf8_chars(gt, gl);
        const char *lists[] = {"content", "tokens", "token_logprobs", "top_logprobs", "text_offset"};
        for (size_t i = c->chat ? 0 : 1; i < (c->chat ? 1u : 5u); i++)
            while (json_array_size(json_object_get(*lp, lists[i])) > keep)
                json_array_remove(json_object_get(*lp, lists[i]), keep);
    }
    ig_gen_free(&g);
    ig_buf_free(&ctx);
    return 0;
}

reply srv_completions(server *s, json_t *body, int chat, const volatile int *cancel)
{
    comp_req c;
    reply r = comp_parse(s, body, chat, &c);
    c.cancel = cancel;
    c.o.model.cancel = cancel; /* a prediction over a long prompt stops at the deadline too */
    if (!r.status)
        r = comp_check_prompts(s, &c);
    if (r.status) {
        comp_free(s, &c);
        return r;
    }
    json_t *o = json_object(), *choices = json_array();
    json_object_set_new(o, "id", json_string(c.id));
    json_object_set_new(o, "object", json_string(chat ? "chat.completion" : "text_completion"));
    json_object_set_new(o, "created", json_integer(c.created));
    json_object_set_new(o, "model", json_string(c.ds->name));
    json_object_set_new(o, "choices", choices);
    uint64_t prompt_chars = 0, out_chars = 0;
    unsigned index = 0;
    for (size_t p = 0; p < c.nprompts; p++) {
        size_t pc = utf8_chars((const uint8_t *)c.prompts[p], c.plens[p]);
        prompt_chars += pc;
        for (unsigned k = 0; k < c.opt.n; k++, index++) {
            ig_buf text = {0};
            const char *finish;
            json_t *lp;
            ig_error e;
            int failed = run_choice(&c, p, k, &text, &finish, &lp, &e);
            if (failed || srv_flag_up(cancel) || text.failed) { /* no one waits for the rest, or it is too late */
                r = srv_flag_up(cancel) ? srv_cancelled(s)
                    : failed            ? srv_error_ig(&e)
                                        : srv_error(500, "internal", "out of memory");
                json_decref(lp);
                ig_buf_free(&text);
                json_decref(o);
                comp_free(s, &c);
                return r;
            }
            out_chars += utf8_chars(text.data, text.len) - (c.opt.echo ? pc : 0);
            json_t *ch = json_object();
            json_object_set_new(ch, "index", json_integer(index));
            json_t *t = json_stringn(text.len ? (const char *)text.data : "", text.len);
            if (chat)
                json_object_set_new(ch, "message", json_pack("{s:s,s:o}", "role", "assistant", "content", t));
            else
                json_object_set_new(ch, "text", t);
            json_object_set_new(ch, "logprobs", lp ? lp : json_null());
            json_object_set_new(ch, "finish_reason", json_string(finish));
            json_array_append_new(choices, ch);
            ig_buf_free(&text);
        }
    }
    json_object_set_new(o, "usage", json_pack("{s:I,s:I,s:I}", "prompt_tokens", (json_int_t)prompt_chars,
                                              "completion_tokens", (json_int_t)out_chars, "total_tokens",
                                              (json_int_t)(prompt_chars + out_chars)));
    comp_free(s, &c);
    char *txt = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return txt ? srv_ok(txt) : srv_error(500, "internal", "out of memory");
}

/* ---- streaming ---- */

typedef struct stream_state {
    server *s;
    comp_req c;
    size_t prompt;
    unsigned k, index;
    ig_gen *g;
    int started, finished;
    ig_buf pending;           ///< bytes not yet handed to the connection
    size_t taken;             ///< of pending, already handed
    size_t sent;              ///< of the generator's text, already in events
    ig_buf ctx;               ///< the prompt and the characters generated (logprobs predict after it)
    struct gen_char {
        uint64_t effn;        ///< effective n of the character
        json_t *lp;           ///< its logprobs entry (NULL when not asked)
        size_t offset;        ///< its offset in the choice's text, in characters
    } *chars;                 ///< each character generated so far in this choice
    size_t nchars, capchars;
    size_t sent_chars;        ///< characters already in events
    size_t text_chars;        ///< characters of the choice's text so far (the echoed prompt included)
    json_t *echo_lp;          ///< the echoed prompt's logprobs entries, for its chunk
    struct MHD_Connection *conn; ///< the stream's connection, suspended while its prompt is scored
    srv_job echo_job;         ///< the echoed prompt's scoring, on a compute thread
    int echo_state;           ///< ECHO_NONE, ECHO_SCORING (suspended) or ECHO_SCORED
    int echo_stopped;         ///< the scoring was stopped (client gone, deadline, stop)
    int usage;                ///< stream_options.include_usage: a last chunk with the usage, as OpenAI sends it
    uint64_t out_chars;       ///< characters of every finished choice's text (the usage's completion_tokens)
} stream_state;

enum { ECHO_NONE, ECHO_SCORING, ECHO_SCORED };
enum { STREAM_WAIT = 2 };

/* One server-sent event: "data: " DATA and a blank line. */
static void emit_event(stream_state *st, const char *data)
{
    ig_buf_append(&st->pending, "data: ", 6);
    ig_buf_append(&st->pending, data, strlen(data));
    ig_buf_append(&st->pending, "\n\n", 2);
}

/* The event of a JSON object (consumed). */
static void emit_object(stream_state *st, json_t *o)
{
    char *j = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (j)
        emit_event(st, j);
    free(j);
}

/* A chunk's members before its choices: id, object, created, model. */
static json_t *chunk_head(const stream_state *st)
{
    return json_pack("{s:s,s:s,s:I,s:s}", "id", st->c.id, "object", st->c.chat ? "chat.completion.chunk" : "text_completion",
                     "created", (json_int_t)st->c.created, "model", st->c.ds->name);
}

/* `generated`: the text is the generator's (not the echoed prompt), so each of its
 * characters has an effective n to send with it. */
static void emit_chunk(stream_state *st, const uint8_t *text, size_t n, const char *finish, int generated)
{
    if (st->c.chat && !st->started) {
        /* the role first, alone, as OpenAI sends it: a client library that accumulates the
         * logprobs of the first chunk apart from the rest counts them once only then */
        json_t *r = chunk_head(st);
        json_object_set_new(r, "choices", json_pack("[{s:I,s:{s:s,s:s},s:n,s:n}]", "index", (json_int_t)st->index, "delta",
                                                    "role", "assistant", "content", "", "logprobs", "finish_reason"));
        emit_object(st, r);
        st->started = 1;
    }
    json_t *o = chunk_head(st), *ch = json_object();
    json_object_set_new(ch, "index", json_integer(st->index));
    json_t *lp = generated && text && st->c.opt.logprobs >= 0 ? lp_new(st->c.chat) : NULL;
    if (!generated && st->echo_lp) { /* the echoed prompt's entries */
        lp = st->echo_lp;
        st->echo_lp = NULL;
    }
    if (st->c.chat) {
        json_t *d = json_object();
        if (text)
            json_object_set_new(d, "content", json_stringn((const char *)text, n));
        json_object_set_new(ch, "delta", d);
    } else {
        json_object_set_new(ch, "text", json_stringn(text ? (const char *)text : "", text ? n : 0));
    }
    if (generated && text) {
        /* the text sent is always a prefix of the characters generated, so its characters
         * are the next ones of chars (a withdrawn stop string is never sent) */
        json_t *en = json_array();
        size_t k = utf8_chars(text, n);
        for (size_t i = 0; i < k && st->sent_chars < st->nchars; i++) {
            struct gen_char *g = &st->chars[st->sent_chars++];
            json_array_append_new(en, json_integer((json_int_t)g->effn));
            lp_add(lp, st->c.chat, g->lp, g->offset);
            g->lp = NULL;
        }
        json_object_set_new(ch, "effective_n", en);
    }
    json_object_set_new(ch, "logprobs", lp ? lp : json_null());
    json_object_set_new(ch, "finish_reason", finish ? json_string(finish) : json_null());
    json_object_set_new(o, "choices", json_pack("[o]", ch));
    emit_object(st, o);
    st->started = 1;
}

/* Records the character just generated (its offset counts the echoed prompt); its logprobs
 * entry is made now, while ctx ends where the character was predicted. */
static int char_push(stream_state *st, const ig_gen_step *step)
{
    if (st->nchars == st->capchars) {
        size_t cap = st->capchars ? st->capchars * 2 : 256;
        struct gen_char *a = realloc(st->chars, cap * sizeof *a);
        if (!a)
            return -1;
        st->chars = a;
        st->capchars = cap;
    }
    struct gen_char *g = &st->chars[st->nchars];
    g->effn = step->effective_n;
    g->offset = st->text_chars;
    g->lp = st->c.opt.logprobs >= 0 ? lp_entry(&st->c, &st->ctx, step) : NULL;
    if (ig_buf_append(&st->ctx, step->bytes, step->len)) {
        json_decref(g->lp);
        return -1;
    }
    st->nchars++;
    st->text_chars++;
    return 0;
}

/* Forgets the characters of the choice just finished. */
static void chars_clear(stream_state *st)
{
    for (size_t i = 0; i < st->nchars; i++)
        json_decref(st->chars[i].lp);
    st->nchars = st->sent_chars = 0;
    st->ctx.len = 0;
    st->text_chars = 0;
}

/* Ends the stream with the error (taken) as its last event: the headers (200) are gone. */
static int stream_fail(stream_state *st, reply r)
{
    emit_event(st, r.body ? r.body : "{\"error\":{\"message\":\"out of memory\",\"code\":\"internal\"}}");
    free(r.body);
    ig_gen_free(&st->g);
    st->prompt = st->c.nprompts;
    st->finished = 1;
    return 1;
}

/* On a compute thread: scores the echoed prompt of the stream's current choice, then resumes
 * its connection. Nothing of st is touched after the resume. */
static void echo_run(srv_job *j)
{
    stream_state *st = (stream_state *)((char *)j - offsetof(stream_state, echo_job));
    st->echo_stopped = lp_prompt(&st->c, st->prompt, st->echo_lp);
    st->echo_state = ECHO_SCORED;
    MHD_resume_connection(st->conn);
}

/* Hands the echoed prompt's scoring to the compute threads, the connection suspended until
 * it is done (STREAM_WAIT), or ends the stream when the server stops. */
static int echo_submit(stream_state *st)
{
    st->echo_job.run = echo_run;
    st->echo_job.dead = NULL; /* never swept: it stops at once by itself when no one waits */
    st->echo_state = ECHO_SCORING; /* before: the job may be done before the hand-over returns */
    if (!srv_hand_over(st->s, st->conn, &st->echo_job))
        return STREAM_WAIT;
    st->echo_state = ECHO_NONE;
    json_decref(st->echo_lp);
    st->echo_lp = NULL;
    return stream_fail(st, srv_cancelled(st->s));
}

/* Produces more event text; returns 0 when everything has been produced, STREAM_WAIT when the
 * connection waits (suspended) for a compute thread. */
static int stream_more(stream_state *st)
{
    ig_error e;
    if (!st->finished && srv_flag_up(st->c.cancel))
        return stream_fail(st, srv_cancelled(st->s));
    while (st->prompt < st->c.nprompts) {
        if (!st->g) {
            if (st->c.opt.echo && st->c.opt.logprobs >= 0 && st->echo_state != ECHO_SCORED) {
                /* the prompt's scoring can be long: on a compute thread, not this one, which
                 * serves other connections; the stream comes back here when it is done */
                if (!(st->echo_lp = lp_new(st->c.chat)))
                    return stream_fail(st, srv_error(500, "internal", "out of memory"));
                return echo_submit(st);
            }
            st->started = 0;
            if (choice_start(&st->c, st->prompt, st->k, &st->g, &st->ctx, &e))
                return stream_fail(st, srv_error_ig(&e));
            if (st->c.opt.echo) {
                if (st->echo_state == ECHO_SCORED) {
                    st->echo_state = ECHO_NONE;
                    if (st->echo_stopped) {
                        json_decref(st->echo_lp);
                        st->echo_lp = NULL;
                        return stream_fail(st, srv_cancelled(st->s));
                    }
                }
                emit_chunk(st, (const uint8_t *)st->c.prompts[st->prompt], st->c.plens[st->prompt], NULL, 0);
                st->text_chars = utf8_chars((const uint8_t *)st->c.prompts[st->prompt], st->c.plens[st->prompt]);
                return 1;
            }
        }
        ig_gen_step step;
        int r = ig_gen_next(st->g, &step, &e);
        if (r < 0)
            return stream_fail(st, srv_error_ig(&e));
        if (r == IG_STOP_NONE && char_push(st, &step))
            return stream_fail(st, srv_error(500, "internal", "out of memory"));
        size_t gl;
        const uint8_t *gt = ig_gen_text(st->g, &gl);
        if (r == IG_STOP_NONE) {
            /* with stop strings, a character may still be withdrawn: send only what the
             * generator keeps (its text never shrinks below what was sent before) */
            size_t hold = ig_gen_held(st->g);
            if (gl - hold > st->sent) {
                emit_chunk(st, gt + st->sent, gl - hold - st->sent, NULL, 1);
                st->sent = gl - hold;
                return 1;
            }
            continue;
        }
        if (gl > st->sent)
            emit_chunk(st, gt + st->sent, gl - st->sent, NULL, 1);
        emit_chunk(st, NULL, 0, r == IG_STOP_MAX ? "length" : "stop", 0);
        st->out_chars += utf8_chars(gt, gl); /* the choice's text: a withdrawn stop string is not in it */
        ig_gen_free(&st->g);
        st->sent = 0;
        chars_clear(st);
        st->index++;
        if (++st->k == st->c.opt.n) {
            st->k = 0;
            st->prompt++;
        }
        return 1;
    }
    if (!st->finished) {
        if (st->usage) { /* counted as the answer that is not streamed counts it: characters */
            uint64_t prompt_chars = 0;
            for (size_t p = 0; p < st->c.nprompts; p++)
                prompt_chars += utf8_chars((const uint8_t *)st->c.prompts[p], st->c.plens[p]);
            json_t *o = chunk_head(st);
            json_object_set_new(o, "choices", json_array());
            json_object_set_new(o, "usage", json_pack("{s:I,s:I,s:I}", "prompt_tokens", (json_int_t)prompt_chars,
                                                      "completion_tokens", (json_int_t)st->out_chars, "total_tokens",
                                                      (json_int_t)(prompt_chars + st->out_chars)));
            emit_object(st, o);
        }
        emit_event(st, "[DONE]");
        st->finished = 1;
        return 1;
    }
    return 0;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_state *st = cls;
    while (st->taken == st->pending.len) {
        st->pending.len = st->taken = 0;
        int more = stream_more(st);
        if (!more)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (more == STREAM_WAIT) /* suspended: called again once resumed */
            return 0;
    }
    if (st->pending.failed) /* an event lost to memory: cut the stream rather than send it mangled */
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = st->pending.len - st->taken < max ? st->pending.len - st->taken : max;
    memcpy(buf, st->pending.data + st->taken, n);
    st->taken += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream_state *st = cls;
    ig_gen_free(&st->g);
    comp_free(st->s, &st->c);
    ig_buf_free(&st->pending);
    chars_clear(st);
    free(st->chars);
    ig_buf_free(&st->ctx);
    json_decref(st->echo_lp);
    free(st);
}

int srv_completions_stream(server *s, struct MHD_Connection *conn, json_t *body, int chat, const volatile int *cancel,
                           reply *err)
{
    stream_state *st = calloc(1, sizeof *st);
    if (!st) {
        *err = srv_error(500, "internal", "out of memory");
        return -1;
    }
    st->s = s;
    json_t *so = json_object_get(body, "stream_options");
    st->usage = json_is_object(so) && json_is_true(json_object_get(so, "include_usage"));
    *err = comp_parse(s, body, chat, &st->c);
    st->c.cancel = cancel;
    st->c.o.model.cancel = cancel;
    st->conn = conn;
    if (!err->status && __atomic_load_n(&s->stopping, __ATOMIC_RELAXED))
        *err = srv_cancelled(s);
    if (!err->status)
        *err = comp_check_prompts(s, &st->c);
    if (err->status) {
        comp_free(s, &st->c);
        free(st);
        return -1;
    }
    struct MHD_Response *res = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_reader, st, stream_free);
    if (!res) {
        stream_free(st);
        *err = srv_error(500, "internal", "out of memory");
        return -1;
    }
    if (MHD_add_response_header(res, "Content-Type", "text/event-stream") != MHD_YES ||
        MHD_add_response_header(res, "Cache-Control", "no-cache") != MHD_YES || srv_security_headers(res)) {
        MHD_destroy_response(res);
        return 1;
    }
    enum MHD_Result ok = MHD_queue_response(conn, 200, res);
    MHD_destroy_response(res);
    return ok == MHD_YES ? 0 : 1;
}
