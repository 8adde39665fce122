/* record_internal.h — the record encoder's switch to the older record version, for the tests
 * that build version-1 records and caches; outside the library's API (not installed by
 * `make install`): the library writes version 2 only.
 */
#ifndef XTTS_RECORD_INTERNAL_H
#define XTTS_RECORD_INTERNAL_H

#include "common/xtts_common.h"
#include "formats/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record version to write: 2 (the default) or 1.
 * Errors: XTTS_EUSAGE (a version this build does not write). */
xtts_status xtts_record_encoder_set_version(xtts_record_encoder *enc, int version, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
