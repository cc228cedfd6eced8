/*
 * libinfinigram: an exact ∞-gram engine over raw UTF-8 bytes. Include this umbrella
 * header; the parts are error.h (codes and messages), index.h (open and query an
 * index), build.h (ingest and build) and catalog.h (named datasets).
 */
#ifndef IG_INFINIGRAM_H
#define IG_INFINIGRAM_H

#include "version.h"
#include "error.h"
#include "index.h"
#include "build.h"
#include "catalog.h"
#include "model.h"
#include "generate.h"
#include "fields.h"
#include "query.h"
#include "modelops.h"
#include "genops.h"

#endif
