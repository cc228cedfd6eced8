/*
 * libinfinigram: an exact ∞-gram engine over raw UTF-8 bytes. Include this umbrella
 * header; the parts, by topic: version.h (version numbers), error.h (codes and
 * messages), index.h (open and check an index, documents), build.h (ingest and build),
 * query.h (find, count, positions, locate, spans, search, CNF; the query operations),
 * model.h (language models and the model operations), generate.h (sampling and the
 * generate operation), explain.h (why a prediction), contam.h (eval-set contamination
 * and decontamination), dups.h (repeated passages), catalog.h (named datasets), text.h
 * (UTF-8, normalisation, terms) and fields.h (what every typed operation shares: field
 * tables, contexts, the operation registry).
 */
#ifndef IG_INFINIGRAM_H
#define IG_INFINIGRAM_H

#include "version.h"
#include "error.h"
#include "text.h"
#include "index.h"
#include "build.h"
#include "catalog.h"
#include "fields.h"
#include "query.h"
#include "dups.h"
#include "model.h"
#include "generate.h"
#include "explain.h"
#include "contam.h"
#include "tokens.h"

#endif
