/*
 * Version numbers of libinfinigram and of the on-disk index format. meson reads the
 * API numbers from this file for the project version, so they live in one place.
 */
#ifndef IG_VERSION_H
#define IG_VERSION_H

#define IG_API_VERSION_MAJOR 0
#define IG_API_VERSION_MINOR 1
#define IG_API_VERSION_PATCH 0

/** Index format written by this library; older or newer versions are refused at open. */
#define IG_INDEX_FORMAT_VERSION 1

/** Catalog schema version (SQLite PRAGMA user_version) this library migrates to. */
#define IG_CATALOG_SCHEMA_VERSION 7

#endif
