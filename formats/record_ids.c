/* record_ids.c — rewrite a record's speaker and language ids (record_ids.h). */
#include "formats/record_ids.h"

#include <string.h>

#include "formats/record.h"

xtts_status xtts_record_set_ids(void *buf, size_t len, uint32_t speaker_id, uint32_t lang_id, xtts_error *err) {
    uint8_t *h = buf;
    if (len < XTTS_RECORD_HEADER_BYTES || memcmp(h, "XTRC", 4))
        return xtts_error_set(err, XTTS_EINPUT, "not a record");
    size_t id_len = xtts_get_le16(h + 12);
    if (len < XTTS_RECORD_HEADER_BYTES + id_len) return xtts_error_set(err, XTTS_EINPUT, "record shorter than its id");
    xtts_put_le32(h + 32, speaker_id);
    xtts_put_le32(h + 36, lang_id);
    uint32_t crc = xtts_crc32(0, h, 60);
    crc = xtts_crc32(crc, h + XTTS_RECORD_HEADER_BYTES, id_len);
    xtts_put_le32(h + 60, crc);
    return XTTS_OK;
}
