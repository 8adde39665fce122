/* table.c — the table of dataset formats (metadata_internal.h): per format, its name, its
 * kind (one file of lines, or a tree of transcript files), its separator, whether a header
 * row names its columns, whether it fills a language per record, and its one language. */
#include "prep/dataset/metadata_internal.h"

const format_entry xtts_meta_formats[XTTS_META_N_FORMATS] = {
    [XTTS_META_LJSPEECH] = {"ljspeech", KIND_LINES, '|', 0, 0, NULL},
    [XTTS_META_TSV] = {"tsv", KIND_LINES, '\t', 1, 1, NULL},
    [XTTS_META_COQUI] = {"coqui", KIND_LINES, '|', 1, 1, NULL},
    [XTTS_META_VCTK] = {"vctk", KIND_TREE, 0, 0, 1, "en"},
    [XTTS_META_LIBRITTS] = {"libritts", KIND_TREE, '\t', 0, 1, "en"},
    [XTTS_META_COMMONVOICE] = {"commonvoice", KIND_LINES, '\t', 1, 1, NULL},
    [XTTS_META_MAILABS] = {"mailabs", KIND_TREE, '|', 0, 1, NULL},
    [XTTS_META_NEMO] = {"nemo", KIND_LINES, 0, 0, 1, NULL},
    [XTTS_META_LHOTSE] = {"lhotse", KIND_LINES, 0, 0, 1, NULL},
};
