/* queries: see queries.h. */
#include <stddef.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "queries.h"
#include "counts.h"
#include "explain.h"
#include "generate.h"
#include "mix.h"
#include "models.h"
#include "search.h"
#include "spans.h"

static const query_cmd queries[] = {
    {&ig_op_count, cmd_count, NULL},     {&ig_op_doc, cmd_doc, NULL},         {&ig_op_predict, cmd_predict, NULL},
    {&ig_op_prob, cmd_prob, prob_words}, {&ig_op_backoff, cmd_backoff, NULL}, {&ig_op_generate, cmd_generate, NULL},
    {&ig_op_spans, cmd_spans, NULL},     {&ig_op_mix, cmd_mix, NULL},         {&ig_op_eval, cmd_eval, NULL},
    {&ig_op_explain, cmd_explain, NULL}, {&ig_op_search, cmd_search, NULL},
};

/* Room for any distributed command's options and result. */
typedef union query_opts {
    ig_count_opts count;
    ig_doc_opts doc;
    ig_predict_opts predict;
    ig_prob_opts prob;
    ig_backoff_opts backoff;
    ig_generate_opts generate;
    ig_spans_opts spans;
    ig_mix_opts mix;
    ig_eval_opts eval;
    ig_explain_opts explain;
    ig_search_opts search;
} query_opts;

typedef union query_result {
    ig_count_result count;
    ig_doc_result doc;
    ig_predict_result predict;
    ig_prob_result prob;
    ig_backoff_result backoff;
    ig_generate_result generate;
    ig_spans_result spans;
    ig_mix_result mix;
    ig_eval_op_result eval;
    ig_explain_result explain;
    ig_search_op_result search;
} query_result;

const query_cmd *query_find(const ig_op *op, const char *name)
{
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++)
        if ((op && queries[i].op == op) || (name && !strcmp(queries[i].op->name, name)))
            return &queries[i];
    return NULL;
}

int query_answer(const query_cmd *qc, const words *ws, double t0)
{
    const ig_op *op = qc->op;
    query_opts o;
    query_result r;
    ig_error e;
    if (op->opts_size > sizeof o || op->result_size > sizeof r) /* a row whose types the unions miss */
        return fail(op->name, IG_EINTERNAL, t0, "%s: no room for its options", op->name);
    if (cmd_begin(op, &o, &r, t0))
        return -1;
    int rc = ws && qc->check && qc->check(ws, t0) ? -1
             : fill_opts(op, &o, ws, &e)          ? fail(op->name, e.code, t0, "%s", e.msg)
                                                  : qc->run(&o, &r, ws, t0);
    op->free_result(&r);
    ig_fields_free(op->fields, &o);
    return rc;
}
