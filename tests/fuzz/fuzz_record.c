/* fuzz_record.c — libFuzzer target for the record codec's decoder (formats/record.h), the
 * parser of the bytes a cache reader takes from disk: xtts_record_parse_header,
 * xtts_record_decode into float32 and fp16 buffers, and the content digest of what
 * decodes.
 *
 * Input: byte 0 chooses the caller's buffer shape (tight or roomy), the rest is the
 * stored record. Checks beyond "no crash, no out-of-bounds access": decode succeeds only
 * when the header parses, a decoded header keeps its lengths within its padded shape,
 * columns past the stored frames hold the pad value, and the float32 and fp16 decodings
 * of one record agree; for version 2 also the text and waveform sections (zstd and FLAC)
 * and the whole-record check, which passes only when every section decodes. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/verify.h"
#include "common/xtts_common.h"
#include "formats/record.h"

#define TOK_CAP 4096
#define MEL_CAP 128
#define FRAMES_CAP 2048

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static xtts_record_decoder *dec;
    static int32_t *tokens;
    static float *mel32;
    static uint16_t *mel16;
    if (!dec) {
        xtts_record_decoder_new(&dec);
        tokens = malloc(TOK_CAP * sizeof *tokens);
        mel32 = malloc((size_t)MEL_CAP * FRAMES_CAP * sizeof *mel32);
        mel16 = malloc((size_t)MEL_CAP * FRAMES_CAP * sizeof *mel16);
        if (!dec || !tokens || !mel32 || !mel16) abort();
    }
    if (size < 1) return 0;
    int roomy = data[0] & 1;
    const uint8_t *rec = data + 1;
    size_t len = size - 1;
    /* A copy of exactly len bytes, so reads past the end are caught. */
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return 0;
    memcpy(buf, rec, len);

    xtts_record_header h, h2;
    xtts_error e;
    xtts_status ph = xtts_record_parse_header(buf, len, &h, &e);
    size_t tcap = roomy ? TOK_CAP : (ph == XTTS_OK && h.tokens_padded < TOK_CAP ? h.tokens_padded : TOK_CAP);
    size_t fcap = roomy ? FRAMES_CAP : (ph == XTTS_OK && h.frames_padded < FRAMES_CAP ? h.frames_padded : FRAMES_CAP);
    xtts_status st = xtts_record_decode(dec, buf, len, &h2, tokens, tcap, mel32, XTTS_DTYPE_F32, MEL_CAP, fcap, &e);
    if (st == XTTS_OK) {
        if (ph != XTTS_OK) abort(); /* decode accepted what the header parser refused */
        if (h2.n_tokens > h2.tokens_padded || h2.n_frames > h2.frames_padded) abort();
        if (h2.n_mels > MEL_CAP || h2.frames_padded > fcap || h2.tokens_padded > tcap) abort();
        if (strlen(h2.id) != h2.id_len) {
            /* ids may hold NUL bytes; the digest hashes id_len bytes either way */
        }
        /* version 2 writes the padding as the stored dtype rounds it */
        float padv = h2.version >= 2 && h2.dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(h2.pad_value))
                                                                   : h2.pad_value;
        for (size_t c = 0; c < h2.n_mels; c++)
            for (size_t t = (h2.version >= 2 ? h2.n_frames : h2.frames_padded); t < fcap; t++)
                if (t >= h2.frames_padded || h2.version >= 2)
                    if (memcmp(&mel32[c * fcap + t], &padv, 4)) abort();
        xtts_sha256 s;
        xtts_sha256_init(&s);
        xtts_digest_record(&s, &h2, tokens, mel32, fcap);
        uint8_t d[32];
        xtts_sha256_final(&s, d);
        /* the same record as fp16 */
        if (xtts_record_decode(dec, buf, len, NULL, NULL, 0, mel16, XTTS_DTYPE_F16, MEL_CAP, fcap, &e) != XTTS_OK)
            abort();
        for (size_t c = 0; c < h2.n_mels; c++)
            for (size_t t = 0; t < h2.frames_padded; t++) {
                float v = mel32[c * fcap + t];
                uint16_t want = xtts_f32_to_f16(v), got = mel16[c * fcap + t];
                if (isnan(v) ? !isnan(xtts_f16_to_f32(got)) : got != want) abort();
            }
    } else if (ph == XTTS_OK && st == XTTS_ECORRUPT && strlen(e.msg) == 0) {
        abort(); /* every failure carries a message */
    }
    /* version 2's other sections: text, waveform (zstd or FLAC), the whole-record check */
    if (ph == XTTS_OK && h.version >= 2) {
        const char *o, *n;
        size_t ol, nl;
        if (xtts_record_decode_text(dec, buf, len, &o, &ol, &n, &nl, &e) == XTTS_OK)
            if (strlen(o) != ol || strlen(n) != nl) abort();
        static int16_t wave[1 << 16];
        size_t ns = h.n_samples < (1u << 16) ? h.n_samples : (1u << 16);
        xtts_status ws = xtts_record_decode_wave(dec, buf, len, wave, 0, ns, &e);
        xtts_status cs = xtts_record_check(dec, buf, len, &e);
        /* a record that checks whole decodes, unless it is larger than this caller's buffers
         * (a padded shape the format allows: decode refuses it with XTTS_ERANGE) */
        int fits = h.n_mels <= MEL_CAP && h.frames_padded <= fcap && h.tokens_padded <= tcap;
        if (cs == XTTS_OK && ((fits ? st != XTTS_OK : st != XTTS_ERANGE) ||
                              (h.audio != XTTS_AUDIO_NONE && ws != XTTS_OK)))
            abort();
    }
    free(buf);
    return 0;
}
