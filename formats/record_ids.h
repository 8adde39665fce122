/* record_ids.h — set the speaker and language ids of an encoded record in place.
 *
 * A record carried from one cache into another keeps its bytes, but the new cache's speaker
 * and language tables may number the same speaker or language otherwise: the ids in the
 * header (offsets 32 and 36, both record versions) are rewritten and the header CRC
 * (offset 60: bytes 0..59 then the id) computed again. Nothing else changes.
 */
#ifndef XTTS_FORMATS_RECORD_IDS_H
#define XTTS_FORMATS_RECORD_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

/* Errors: XTTS_EINPUT when buf does not hold a record's header and id. */
xtts_status xtts_record_set_ids(void *buf, size_t len, uint32_t speaker_id, uint32_t lang_id, xtts_error *err);

#endif
