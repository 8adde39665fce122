/* test_record.c — the record codec (formats/record.c): round trips of every field for
 * both dtypes with and without byte shuffling, padding on decode, and hostile input:
 * every single-byte change, every truncation, buffers too small (checked with guard
 * bytes), and headers that lie about their shape while carrying a valid CRC. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "formats/record.h"
#include "formats/record_internal.h"

/* ---- a test record ------------------------------------------------------------- */

typedef struct {
    int32_t *tokens;
    float *mel;
    xtts_record_input in;
} sample;

/* tokens: n_tokens ids then pad id 0; mel: [n_mels][frames_padded], values in the log-mel
 * range, pad_value after n_frames. */
static void sample_make(sample *s, const char *id, uint32_t n_tokens, uint32_t tokens_padded, uint32_t n_frames,
                        uint32_t frames_padded, uint16_t n_mels) {
    s->tokens = calloc(tokens_padded ? tokens_padded : 1, sizeof(int32_t));
    s->mel = calloc((size_t)n_mels * (frames_padded ? frames_padded : 1), sizeof(float));
    assert_non_null(s->tokens);
    assert_non_null(s->mel);
    for (uint32_t i = 0; i < n_tokens; i++) s->tokens[i] = (int32_t)(i * 7919 % 6681) - 3; /* some negative */
    const float pad = logf(1e-5f);
    for (uint32_t c = 0; c < n_mels; c++)
        for (uint32_t t = 0; t < frames_padded; t++)
            s->mel[(size_t)c * frames_padded + t] =
                t < n_frames ? -11.0f + 9.0f * (float)((c * 31 + t * 17) % 97) / 97.0f + 1e-4f * (float)t : pad;
    memset(&s->in, 0, sizeof s->in);
    s->in.id = id;
    s->in.split = XTTS_SPLIT_VAL;
    s->in.speaker_id = 70001;
    s->in.lang_id = 16;
    s->in.n_samples = n_frames * 256 + 13;
    s->in.n_tokens = n_tokens;
    s->in.tokens_padded = tokens_padded;
    s->in.n_frames = n_frames;
    s->in.frames_padded = frames_padded;
    s->in.n_mels = n_mels;
    s->in.pad_value = pad;
    s->in.tokens = s->tokens;
    s->in.mel = s->mel;
}

static void sample_free(sample *s) {
    free(s->tokens);
    free(s->mel);
}

/* Encode and return a malloc'd copy (the encoder's buffer is reused by the next call). */
static uint8_t *encode_copy_level(xtts_dtype dtype, int level, unsigned flags, const xtts_record_input *in,
                                  size_t *len) {
    xtts_record_encoder *enc;
    xtts_record_encoder_new(dtype, level, flags, &enc);
    assert_non_null(enc);
    const uint8_t *out;
    xtts_error err;
    xtts_error_clear(&err);
    /* this file checks the version-1 layout (still read; tests/test_record_v2.c has version 2) */
    assert_int_equal(xtts_record_encoder_set_version(enc, 1, &err), XTTS_OK);
    xtts_status st = xtts_record_encode(enc, in, &out, len, &err);
    if (st) fail_msg("encode: %s", err.msg);
    uint8_t *copy = malloc(*len);
    assert_non_null(copy);
    memcpy(copy, out, *len);
    xtts_record_encoder_delete(enc);
    return copy;
}

static uint8_t *encode_copy(xtts_dtype dtype, unsigned flags, const xtts_record_input *in, size_t *len) {
    return encode_copy_level(dtype, 3, flags, in, len);
}

/* Recompute the header CRC after editing header fields, as a forger would. */
static void reseal(uint8_t *rec) {
    uint16_t id_len = xtts_get_le16(rec + 12);
    uint32_t crc = xtts_crc32(0, rec, 60);
    crc = xtts_crc32(crc, rec + XTTS_RECORD_HEADER_BYTES, id_len);
    xtts_put_le32(rec + 60, crc);
}

/* ---- guarded buffers: GUARD bytes of 0xA5 on both sides ------------------------------ */

#define GUARD 64
typedef struct {
    uint8_t *base;
    size_t bytes;
} guarded;

static void *guarded_new(guarded *g, size_t bytes) {
    g->bytes = bytes;
    g->base = malloc(bytes + 2 * GUARD);
    assert_non_null(g->base);
    memset(g->base, 0xA5, bytes + 2 * GUARD);
    return g->base + GUARD;
}

static void guarded_check(const guarded *g) {
    for (size_t i = 0; i < GUARD; i++) {
        if (g->base[i] != 0xA5) fail_msg("write %zu bytes before the buffer", GUARD - i);
        if (g->base[GUARD + g->bytes + i] != 0xA5) fail_msg("write %zu bytes past the buffer", i);
    }
}

/* ---- round trips ---------------------------------------------------------------------- */

static void check_round_trip(xtts_dtype dtype, unsigned flags) {
    sample s;
    sample_make(&s, "LJ001-0001", 37, 64, 101, 128, 80);
    size_t len;
    uint8_t *rec = encode_copy(dtype, flags, &s.in, &len);

    xtts_record_header h;
    xtts_error err;
    assert_int_equal(xtts_record_parse_header(rec, len, &h, &err), XTTS_OK);
    assert_int_equal(h.version, 1);
    assert_int_equal(h.dtype, dtype);
    assert_int_equal(h.flags, flags);
    assert_int_equal(h.n_mels, 80);
    assert_int_equal(h.split, XTTS_SPLIT_VAL);
    assert_int_equal(h.n_tokens, 37);
    assert_int_equal(h.tokens_padded, 64);
    assert_int_equal(h.n_frames, 101);
    assert_int_equal(h.frames_padded, 128);
    assert_int_equal(h.speaker_id, 70001);
    assert_int_equal(h.lang_id, 16);
    assert_int_equal(h.n_samples, 101 * 256 + 13);
    assert_int_equal(h.payload_bytes, 64 * 4 + 80 * 128 * xtts_dtype_size(dtype));
    assert_int_equal(h.frame_bytes, len - XTTS_RECORD_HEADER_BYTES - strlen("LJ001-0001"));
    assert_true(h.pad_value == s.in.pad_value);
    assert_int_equal(h.id_len, 10);
    assert_string_equal(h.id, "LJ001-0001");

    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    assert_non_null(dec);
    /* into float32 */
    int32_t tokens[64];
    float *mel = malloc(80 * 128 * sizeof(float));
    assert_non_null(mel);
    xtts_record_header h2;
    assert_int_equal(xtts_record_decode(dec, rec, len, &h2, tokens, 64, mel, XTTS_DTYPE_F32, 80, 128, &err), XTTS_OK);
    assert_memory_equal(&h, &h2, sizeof h);
    assert_memory_equal(tokens, s.tokens, sizeof tokens);
    for (size_t i = 0; i < 80 * 128; i++) {
        float want = dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(s.mel[i])) : s.mel[i];
        if (mel[i] != want) fail_msg("mel[%zu] = %g, want %g", i, (double)mel[i], (double)want);
    }
    /* into float16 */
    uint16_t *mel16 = malloc(80 * 128 * sizeof(uint16_t));
    assert_non_null(mel16);
    assert_int_equal(xtts_record_decode(dec, rec, len, NULL, NULL, 0, mel16, XTTS_DTYPE_F16, 80, 128, &err), XTTS_OK);
    for (size_t i = 0; i < 80 * 128; i++) assert_int_equal(mel16[i], xtts_f32_to_f16(s.mel[i]));
    free(mel16);
    free(mel);
    xtts_record_decoder_delete(dec);
    free(rec);
    sample_free(&s);
}

static void round_trip_keeps_every_field_fp32(void **state) { (void)state; check_round_trip(XTTS_DTYPE_F32, 0); }
static void round_trip_keeps_every_field_fp16(void **state) { (void)state; check_round_trip(XTTS_DTYPE_F16, 0); }
static void round_trip_keeps_every_field_fp32_shuffled(void **state) {
    (void)state;
    check_round_trip(XTTS_DTYPE_F32, XTTS_RECORD_SHUFFLED);
}
static void round_trip_keeps_every_field_fp16_shuffled(void **state) {
    (void)state;
    check_round_trip(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED);
}

static void shuffled_and_plain_records_decode_to_the_same_mel(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "same", 5, 8, 30, 32, 16);
    size_t la, lb;
    uint8_t *a = encode_copy(XTTS_DTYPE_F16, 0, &s.in, &la);
    uint8_t *b = encode_copy(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, &s.in, &lb);
    float ma[16 * 32], mb[16 * 32];
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    xtts_error err;
    assert_int_equal(xtts_record_decode(dec, a, la, NULL, NULL, 0, ma, XTTS_DTYPE_F32, 16, 32, &err), XTTS_OK);
    assert_int_equal(xtts_record_decode(dec, b, lb, NULL, NULL, 0, mb, XTTS_DTYPE_F32, 16, 32, &err), XTTS_OK);
    assert_memory_equal(ma, mb, sizeof ma);
    xtts_record_decoder_delete(dec);
    free(a);
    free(b);
    sample_free(&s);
}

/* The fused fp16 plane join (vector body, scalar tail) against the plain layout: frame
 * counts around the vector widths, a wider buffer than the record, both output dtypes,
 * every element including the pad columns compared bit for bit. */
static void shuffled_fp16_decodes_like_plain_for_every_width_and_output_dtype(void **state) {
    (void)state;
    static const uint32_t frames[] = {1, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100};
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
        uint32_t fp = frames[f], cap = fp + 5, nm = 3;
        sample s;
        sample_make(&s, "w", 2, 4, fp > 3 ? fp - 3 : fp, fp, (uint16_t)nm);
        size_t la, lb;
        uint8_t *a = encode_copy(XTTS_DTYPE_F16, 0, &s.in, &la);
        uint8_t *b = encode_copy(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, &s.in, &lb);
        for (int od = 0; od < 2; od++) {
            xtts_dtype out = od ? XTTS_DTYPE_F32 : XTTS_DTYPE_F16;
            size_t bytes = (size_t)nm * cap * xtts_dtype_size(out);
            uint8_t *ma = malloc(bytes), *mb = malloc(bytes);
            assert_non_null(ma);
            assert_non_null(mb);
            memset(ma, 0xA5, bytes);
            memset(mb, 0x5A, bytes);
            xtts_error err;
            assert_int_equal(xtts_record_decode(dec, a, la, NULL, NULL, 0, ma, out, nm, cap, &err), XTTS_OK);
            assert_int_equal(xtts_record_decode(dec, b, lb, NULL, NULL, 0, mb, out, nm, cap, &err), XTTS_OK);
            assert_memory_equal(ma, mb, bytes);
            for (uint32_t c = 0; c < nm; c++)
                for (uint32_t t = 0; t < cap; t++) {
                    float want = t < fp ? xtts_f16_to_f32(xtts_f32_to_f16(s.mel[c * fp + t])) : s.in.pad_value;
                    want = xtts_f16_to_f32(xtts_f32_to_f16(want));
                    float got = od ? ((float *)(void *)mb)[c * cap + t]
                                   : xtts_f16_to_f32(((uint16_t *)(void *)mb)[c * cap + t]);
                    if (od && t >= fp) want = s.in.pad_value; /* fp32 output pads with the exact value */
                    assert_true(got == want);
                }
            free(ma);
            free(mb);
        }
        free(a);
        free(b);
        sample_free(&s);
    }
    xtts_record_decoder_delete(dec);
}

/* formats/record.c's streaming mode (non-temporal stores), declared by its users. */

/* Streaming writes the same values: every stored dtype and layout, both output dtypes,
 * destinations at every element offset within a 32-byte line, widths around the vector
 * sizes. */
static void streaming_decode_writes_the_same_values_at_any_alignment(void **state) {
    (void)state;
    static const uint32_t frames[] = {1, 9, 16, 33, 70};
    xtts_record_decoder *plain, *stream;
    xtts_record_decoder_new(&plain);
    xtts_record_decoder_new(&stream);
    assert_non_null(plain);
    assert_non_null(stream);
    xtts_record_decoder_set_streaming(stream, 1);
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++)
        for (int layout = 0; layout < 4; layout++) {
            xtts_dtype sd = layout & 1 ? XTTS_DTYPE_F32 : XTTS_DTYPE_F16;
            unsigned flags = layout & 2 ? XTTS_RECORD_SHUFFLED : 0;
            uint32_t fp = frames[f], cap = fp + 11, nm = 3;
            sample s;
            sample_make(&s, "nt", 3, 6, fp, fp, (uint16_t)nm);
            size_t len;
            uint8_t *rec = encode_copy(sd, flags, &s.in, &len);
            for (int od = 0; od < 2; od++)
                for (size_t off = 0; off < 32; off += od ? 4 : 2) { /* element-aligned */
                    xtts_dtype out = od ? XTTS_DTYPE_F32 : XTTS_DTYPE_F16;
                    size_t bytes = (size_t)nm * cap * xtts_dtype_size(out);
                    size_t alloc = (bytes + 64 + 63) & ~(size_t)63; /* a multiple of the alignment */
                    uint8_t *a = aligned_alloc(64, alloc), *b = aligned_alloc(64, alloc);
                    assert_non_null(a);
                    assert_non_null(b);
                    memset(a, 0x3C, bytes + 64);
                    memset(b, 0x3C, bytes + 64);
                    int32_t ta[6], tb[6];
                    xtts_error err;
                    assert_int_equal(xtts_record_decode(plain, rec, len, NULL, ta, 6, a + off, out, nm, cap, &err), XTTS_OK);
                    assert_int_equal(xtts_record_decode(stream, rec, len, NULL, tb, 6, b + off, out, nm, cap, &err), XTTS_OK);
                    assert_memory_equal(a, b, bytes + 64); /* nothing written outside either */
                    assert_memory_equal(ta, tb, sizeof ta);
                    free(a);
                    free(b);
                }
            free(rec);
            sample_free(&s);
        }
    xtts_record_decoder_delete(plain);
    xtts_record_decoder_delete(stream);
}

static void encoding_is_deterministic(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "det", 20, 32, 50, 64, 80);
    size_t la, lb;
    uint8_t *a = encode_copy(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, &s.in, &la);
    uint8_t *b = encode_copy(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, &s.in, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    sample_free(&s);
}

static void decoding_into_larger_buffers_pads_columns_and_leaves_the_rest(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "pad", 9, 12, 20, 24, 8);
    for (int dt = 0; dt < 2; dt++) {
        size_t len;
        uint8_t *rec = encode_copy((xtts_dtype)dt, 0, &s.in, &len);
        enum { TCAP = 20, CCAP = 10, FCAP = 40 };
        int32_t tokens[TCAP];
        for (int i = 0; i < TCAP; i++) tokens[i] = -777;
        float mel[CCAP * FCAP];
        for (int i = 0; i < CCAP * FCAP; i++) mel[i] = 1234.5f;
        xtts_record_decoder *dec;
        xtts_record_decoder_new(&dec);
        xtts_error err;
        assert_int_equal(xtts_record_decode(dec, rec, len, NULL, tokens, TCAP, mel, XTTS_DTYPE_F32, CCAP, FCAP, &err),
                         XTTS_OK);
        for (int i = 0; i < 12; i++) assert_int_equal(tokens[i], s.tokens[i]);
        for (int i = 12; i < TCAP; i++) assert_int_equal(tokens[i], -777); /* untouched */
        const float pad = s.in.pad_value;
        const float pad_stored = dt == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(pad)) : pad;
        for (int c = 0; c < CCAP; c++)
            for (int t = 0; t < FCAP; t++) {
                float v = mel[c * FCAP + t];
                if (c >= 8) assert_true(v == 1234.5f);           /* rows past n_mels untouched */
                else if (t >= 24) assert_true(v == pad);         /* columns past frames_padded: pad_value */
                else if (t >= 20) assert_true(v == pad_stored);  /* stored padding */
                else assert_true(v != 1234.5f);
            }
        /* and as fp16 */
        uint16_t mel16[CCAP * FCAP];
        for (int i = 0; i < CCAP * FCAP; i++) mel16[i] = 0x1234;
        assert_int_equal(xtts_record_decode(dec, rec, len, NULL, NULL, 0, mel16, XTTS_DTYPE_F16, CCAP, FCAP, &err),
                         XTTS_OK);
        for (int c = 0; c < CCAP; c++)
            for (int t = 0; t < FCAP; t++) {
                uint16_t v = mel16[c * FCAP + t];
                if (c >= 8) assert_int_equal(v, 0x1234);
                else if (t >= 24) assert_int_equal(v, xtts_f32_to_f16(pad));
            }
        xtts_record_decoder_delete(dec);
        free(rec);
    }
    sample_free(&s);
}

static void one_decoder_serves_records_of_growing_and_shrinking_size(void **state) {
    (void)state;
    static const uint32_t frames[] = {16, 1024, 8, 512, 1};
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    float *mel = malloc(80 * 1024 * sizeof(float));
    int32_t tokens[256];
    for (size_t k = 0; k < sizeof frames / sizeof frames[0]; k++) {
        sample s;
        sample_make(&s, "grow", 100, 256, frames[k], frames[k], 80);
        size_t len;
        uint8_t *rec = encode_copy(XTTS_DTYPE_F16, k & 1 ? XTTS_RECORD_SHUFFLED : 0, &s.in, &len);
        xtts_record_header h;
        xtts_error err;
        assert_int_equal(xtts_record_decode(dec, rec, len, &h, tokens, 256, mel, XTTS_DTYPE_F32, 80, 1024, &err),
                         XTTS_OK);
        assert_int_equal(h.frames_padded, frames[k]);
        assert_true(mel[79 * 1024 + frames[k] - 1] == xtts_f16_to_f32(xtts_f32_to_f16(s.mel[79 * frames[k] + frames[k] - 1])));
        free(rec);
        sample_free(&s);
    }
    free(mel);
    xtts_record_decoder_delete(dec);
}

static void empty_token_list_and_empty_id_round_trip(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "", 0, 0, 3, 4, 2);
    size_t len;
    uint8_t *rec = encode_copy(XTTS_DTYPE_F32, 0, &s.in, &len);
    xtts_record_header h;
    float mel[2 * 4];
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    xtts_error err;
    assert_int_equal(xtts_record_decode(dec, rec, len, &h, NULL, 0, mel, XTTS_DTYPE_F32, 2, 4, &err), XTTS_OK);
    assert_string_equal(h.id, "");
    assert_int_equal(h.tokens_padded, 0);
    assert_memory_equal(mel, s.mel, sizeof mel);
    xtts_record_decoder_delete(dec);
    free(rec);
    sample_free(&s);
}

/* ---- the encoder refuses what it cannot store ------------------------------------------ */

static void encoder_rejects_lengths_beyond_padding_and_limits(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "bad", 4, 8, 4, 8, 4);
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F16, 3, 0, &enc);
    const uint8_t *out;
    size_t len;
    xtts_error err;
    xtts_record_input in = s.in;
    in.n_tokens = 9;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    assert_non_null(strstr(err.msg, "bad"));
    in = s.in;
    in.n_frames = 9;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    in = s.in;
    in.n_mels = 0;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    in = s.in;
    in.split = 2;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    in = s.in;
    in.tokens_padded = XTTS_RECORD_MAX_TOKENS + 1;
    in.n_tokens = 0;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    char longid[XTTS_RECORD_MAX_ID + 2];
    memset(longid, 'i', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    in = s.in;
    in.id = longid;
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_ERANGE);
    longid[XTTS_RECORD_MAX_ID] = '\0'; /* exactly the limit is fine */
    assert_int_equal(xtts_record_encode(enc, &in, &out, &len, &err), XTTS_OK);
    xtts_record_encoder_delete(enc);
    sample_free(&s);
}

/* ---- hostile input ------------------------------------------------------------------------ */

typedef struct {
    guarded gt, gm;
    int32_t *tokens;
    float *mel;
    size_t tcap, ccap, fcap;
} guarded_out;

static void guarded_out_new(guarded_out *o, size_t tcap, size_t ccap, size_t fcap) {
    o->tcap = tcap;
    o->ccap = ccap;
    o->fcap = fcap;
    o->tokens = guarded_new(&o->gt, tcap * sizeof(int32_t));
    o->mel = guarded_new(&o->gm, ccap * fcap * sizeof(float));
}

static void guarded_out_check_free(guarded_out *o) {
    guarded_check(&o->gt);
    guarded_check(&o->gm);
    free(o->gt.base);
    free(o->gm.base);
}

static xtts_status decode_guarded(xtts_record_decoder *dec, const uint8_t *rec, size_t len, guarded_out *o,
                                  xtts_error *err) {
    return xtts_record_decode(dec, rec, len, NULL, o->tokens, o->tcap, o->mel, XTTS_DTYPE_F32, o->ccap, o->fcap, err);
}

/* Every byte of a record, changed in each of 9 ways (each single bit, and all bits), makes
 * decoding fail with XTTS_ECORRUPT, for every dtype and layout; nothing is written outside
 * the output buffers. Records are heap copies of exactly their length, so ASan catches any
 * read past the end. */
static void every_single_byte_change_is_detected(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "flip-me", 6, 8, 10, 12, 4);
    static const uint8_t masks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff};
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    size_t tried = 0;
    for (int dt = 0; dt < 2; dt++)
        for (unsigned flags = 0; flags <= XTTS_RECORD_SHUFFLED; flags++) {
            size_t len;
            uint8_t *good = encode_copy((xtts_dtype)dt, flags, &s.in, &len);
            uint8_t *bad = malloc(len);
            assert_non_null(bad);
            for (size_t pos = 0; pos < len; pos++)
                for (size_t m = 0; m < sizeof masks; m++) {
                    memcpy(bad, good, len);
                    bad[pos] ^= masks[m];
                    guarded_out o;
                    guarded_out_new(&o, 8, 4, 12);
                    xtts_error err;
                    xtts_error_clear(&err);
                    xtts_status st = decode_guarded(dec, bad, len, &o, &err);
                    if (st != XTTS_ECORRUPT)
                        fail_msg("dtype %d flags %u: byte %zu of %zu ^ 0x%02x gave status %d (%s)", dt, flags, pos, len,
                                 masks[m], st, err.msg);
                    assert_true(strlen(err.msg) > 0);
                    guarded_out_check_free(&o);
                    tried++;
                }
            free(bad);
            free(good);
        }
    assert_true(tried > 1000);
    xtts_record_decoder_delete(dec);
    sample_free(&s);
}

/* A record larger than the compression level's window (1.3 MB at level 1, whose window is
 * 512 KiB): every bit of the record header, the id and the zstd frame header is covered. */
static void every_frame_header_bit_of_a_large_record_is_covered(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "large", 100, 128, 4000, 4096, 80);
    size_t len;
    uint8_t *good = encode_copy_level(XTTS_DTYPE_F32, 1, 0, &s.in, &len);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    float *mel = malloc(80 * 4096 * sizeof(float));
    int32_t tokens[128];
    xtts_error err;
    assert_int_equal(xtts_record_decode(dec, good, len, NULL, tokens, 128, mel, XTTS_DTYPE_F32, 80, 4096, &err), XTTS_OK);
    size_t end = XTTS_RECORD_HEADER_BYTES + strlen("large") + 24; /* frame header is at most 18 bytes */
    for (size_t pos = 0; pos < end; pos++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, good, len);
            bad[pos] ^= (uint8_t)(1u << bit);
            xtts_status st = xtts_record_decode(dec, bad, len, NULL, tokens, 128, mel, XTTS_DTYPE_F32, 80, 4096, &err);
            if (st != XTTS_ECORRUPT) fail_msg("byte %zu bit %d gave status %d", pos, bit, st);
        }
    free(mel);
    xtts_record_decoder_delete(dec);
    free(bad);
    free(good);
    sample_free(&s);
}

/* Every proper prefix of a record, and the record with bytes appended, is XTTS_ECORRUPT. */
static void every_truncation_and_extension_is_detected(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "truncate-me", 6, 8, 10, 12, 4);
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    for (unsigned flags = 0; flags <= XTTS_RECORD_SHUFFLED; flags++) {
        size_t len;
        uint8_t *good = encode_copy(XTTS_DTYPE_F16, flags, &s.in, &len);
        for (size_t n = 0; n < len; n++) {
            uint8_t *cut = malloc(n ? n : 1);
            assert_non_null(cut);
            memcpy(cut, good, n);
            guarded_out o;
            guarded_out_new(&o, 8, 4, 12);
            xtts_error err;
            xtts_status st = decode_guarded(dec, n ? cut : NULL, n, &o, &err);
            if (st != XTTS_ECORRUPT) fail_msg("prefix of %zu/%zu bytes gave status %d", n, len, st);
            assert_int_equal(xtts_record_parse_header(cut, n, NULL, &err), XTTS_ECORRUPT);
            guarded_out_check_free(&o);
            free(cut);
        }
        for (size_t extra = 1; extra <= 16; extra++) {
            uint8_t *longer = calloc(len + extra, 1);
            memcpy(longer, good, len);
            xtts_error err;
            assert_int_equal(xtts_record_parse_header(longer, len + extra, NULL, &err), XTTS_ECORRUPT);
            free(longer);
        }
        free(good);
    }
    xtts_record_decoder_delete(dec);
    sample_free(&s);
}

/* Buffers smaller than the record are XTTS_ERANGE, and not a byte is written. */
static void buffers_too_small_are_refused_without_writing(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "big", 30, 32, 60, 64, 16);
    size_t len;
    uint8_t *rec = encode_copy(XTTS_DTYPE_F16, 0, &s.in, &len);
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    static const size_t caps[][3] = {{31, 16, 64}, {32, 15, 64}, {32, 16, 63}, {0, 0, 0}, {1, 1, 1}};
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
        guarded_out o;
        guarded_out_new(&o, caps[k][0], caps[k][1], caps[k][2]);
        /* poison the insides too: a refused decode must not touch them */
        memset(o.tokens, 0x5A, o.gt.bytes);
        memset(o.mel, 0x5A, o.gm.bytes);
        xtts_error err;
        assert_int_equal(decode_guarded(dec, rec, len, &o, &err), XTTS_ERANGE);
        assert_non_null(strstr(err.msg, "big"));
        for (size_t i = 0; i < o.gt.bytes; i++) assert_int_equal(((uint8_t *)o.tokens)[i], 0x5A);
        for (size_t i = 0; i < o.gm.bytes; i++) assert_int_equal(((uint8_t *)o.mel)[i], 0x5A);
        guarded_out_check_free(&o);
    }
    /* exactly fitting buffers work and stay inside */
    guarded_out o;
    guarded_out_new(&o, 32, 16, 64);
    xtts_error err;
    assert_int_equal(decode_guarded(dec, rec, len, &o, &err), XTTS_OK);
    guarded_out_check_free(&o);
    /* skipping the tokens does not skip the mel check, and the reverse */
    float one;
    assert_int_equal(xtts_record_decode(dec, rec, len, NULL, NULL, 0, &one, XTTS_DTYPE_F32, 1, 1, &err), XTTS_ERANGE);
    int32_t tok;
    assert_int_equal(xtts_record_decode(dec, rec, len, NULL, &tok, 1, NULL, XTTS_DTYPE_F32, 0, 0, &err), XTTS_ERANGE);
    xtts_record_decoder_delete(dec);
    free(rec);
    sample_free(&s);
}

/* Headers edited and re-sealed with a correct CRC: the shape checks still refuse them. */
static void forged_headers_with_valid_crc_are_refused(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "forged", 6, 8, 10, 12, 4);
    size_t len;
    uint8_t *good = encode_copy(XTTS_DTYPE_F16, 0, &s.in, &len);
    uint8_t *bad = malloc(len);
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    struct {
        const char *what;
        size_t off;
        int width; /* 1, 2, 4 */
        uint32_t value;
        xtts_status want;
    } forge[] = {
        {"n_tokens > tokens_padded", 16, 4, 9, XTTS_ECORRUPT},
        {"n_frames > frames_padded", 24, 4, 13, XTTS_ECORRUPT},
        {"tokens_padded grown", 20, 4, 9, XTTS_ECORRUPT},
        {"frames_padded grown", 28, 4, 13, XTTS_ECORRUPT},
        {"frames_padded shrunk", 28, 4, 11, XTTS_ECORRUPT},
        {"n_mels zero", 8, 2, 0, XTTS_ECORRUPT},
        {"n_mels too many", 8, 2, XTTS_RECORD_MAX_MELS + 1, XTTS_ECORRUPT},
        {"tokens_padded over limit", 20, 4, XTTS_RECORD_MAX_TOKENS + 1, XTTS_ECORRUPT},
        {"frames_padded over limit", 28, 4, XTTS_RECORD_MAX_FRAMES + 1, XTTS_ECORRUPT},
        {"payload_bytes", 44, 4, 0, XTTS_ECORRUPT},
        {"frame_bytes short", 48, 4, 1, XTTS_ECORRUPT},
        {"frame_bytes huge", 48, 4, 0xffffffffu, XTTS_ECORRUPT},
        {"dtype unknown", 6, 1, 2, XTTS_ECORRUPT},
        {"dtype says fp32", 6, 1, XTTS_DTYPE_F32, XTTS_ECORRUPT},
        {"flags unknown", 7, 1, 0x80, XTTS_ECORRUPT},
        {"split unknown", 10, 1, 2, XTTS_ECORRUPT},
        {"pad value NaN", 52, 4, 0x7fc00000u, XTTS_ECORRUPT},
        {"pad value Inf", 52, 4, 0xff800000u, XTTS_ECORRUPT},
        {"version 3", 4, 2, 3, XTTS_EMISMATCH},
        {"id_len beyond record", 12, 2, 1000, XTTS_ECORRUPT},
    };
    for (size_t k = 0; k < sizeof forge / sizeof forge[0]; k++) {
        memcpy(bad, good, len);
        uint8_t *p = bad + forge[k].off;
        if (forge[k].width == 1) p[0] = (uint8_t)forge[k].value;
        else if (forge[k].width == 2) xtts_put_le16(p, (uint16_t)forge[k].value);
        else xtts_put_le32(p, forge[k].value);
        if (forge[k].off + forge[k].width <= 60 && forge[k].off != 12) reseal(bad);
        guarded_out o;
        guarded_out_new(&o, 64, 8, 64);
        xtts_error err;
        xtts_error_clear(&err);
        xtts_status st = decode_guarded(dec, bad, len, &o, &err);
        if (st != forge[k].want) fail_msg("%s: status %d, want %d (%s)", forge[k].what, st, forge[k].want, err.msg);
        guarded_out_check_free(&o);
    }
    xtts_record_decoder_delete(dec);
    free(bad);
    free(good);
    sample_free(&s);
}

/* A header (valid CRC) whose shape implies a payload over the encoder's 1 GiB limit is
 * refused before the decoder allocates anything for it. */
static void header_claiming_a_payload_over_the_limit_is_refused(void **state) {
    (void)state;
    sample s;
    sample_make(&s, "huge", 6, 8, 10, 12, 4);
    size_t len;
    uint8_t *rec = encode_copy(XTTS_DTYPE_F16, 0, &s.in, &len);
    xtts_put_le16(rec + 8, XTTS_RECORD_MAX_MELS);     /* 1024 mels */
    xtts_put_le32(rec + 28, XTTS_RECORD_MAX_FRAMES);  /* x 1M frames x 2 bytes = 2 GiB */
    xtts_put_le32(rec + 44, 8 * 4 + (uint32_t)XTTS_RECORD_MAX_MELS * XTTS_RECORD_MAX_FRAMES * 2); /* consistent */
    reseal(rec);
    xtts_error err;
    xtts_error_clear(&err);
    assert_int_equal(xtts_record_parse_header(rec, len, NULL, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "over the limit"));
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    assert_int_equal(xtts_record_decode(dec, rec, len, NULL, NULL, 0, NULL, XTTS_DTYPE_F32, 0, 0, &err), XTTS_ECORRUPT);
    xtts_record_decoder_delete(dec);
    free(rec);
    sample_free(&s);
}

/* The header binds the frame: a whole, intact zstd frame taken from another record of the
 * same shape is refused, even when the header's own CRC is recomputed. */
static void frame_swapped_in_from_another_record_is_refused(void **state) {
    (void)state;
    sample a, b;
    sample_make(&a, "a", 6, 8, 10, 12, 4);
    sample_make(&b, "b", 6, 8, 10, 12, 4);
    b.tokens[0] = 4242;
    size_t la, lb;
    uint8_t *ra = encode_copy(XTTS_DTYPE_F32, 0, &a.in, &la);
    uint8_t *rb = encode_copy(XTTS_DTYPE_F32, 0, &b.in, &lb);
    size_t fb = lb - XTTS_RECORD_HEADER_BYTES - 1;
    uint8_t *mix = malloc(XTTS_RECORD_HEADER_BYTES + 1 + fb);
    assert_non_null(mix);
    memcpy(mix, ra, XTTS_RECORD_HEADER_BYTES + 1);
    memcpy(mix + XTTS_RECORD_HEADER_BYTES + 1, rb + XTTS_RECORD_HEADER_BYTES + 1, fb);
    xtts_put_le32(mix + 48, (uint32_t)fb);
    reseal(mix);
    int32_t tokens[8];
    float mel[4 * 12];
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    xtts_error err;
    assert_int_equal(xtts_record_decode(dec, mix, XTTS_RECORD_HEADER_BYTES + 1 + fb, NULL, tokens, 8, mel,
                                        XTTS_DTYPE_F32, 4, 12, &err),
                     XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "'a'"));
    xtts_record_decoder_delete(dec);
    free(mix);
    free(ra);
    free(rb);
    sample_free(&a);
    sample_free(&b);
}

/* Random bytes, with and without a valid magic and CRC, never crash the decoder. */
static void random_bytes_never_decode(void **state) {
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    for (int k = 0; k < 2000; k++) {
        size_t len = (size_t)(k % 200) + 1;
        uint8_t *buf = malloc(len);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        if (len >= XTTS_RECORD_HEADER_BYTES && (k & 1)) {
            memcpy(buf, XTTS_RECORD_MAGIC, 4);
            xtts_put_le16(buf + 12, 0);
            reseal(buf);
        }
        guarded_out o;
        guarded_out_new(&o, 16, 4, 16);
        xtts_error err;
        assert_int_not_equal(decode_guarded(dec, buf, len, &o, &err), XTTS_OK);
        guarded_out_check_free(&o);
        free(buf);
    }
    xtts_record_decoder_delete(dec);
}

static void dtype_names_parse_both_ways(void **state) {
    (void)state;
    assert_int_equal(xtts_dtype_parse("fp16"), XTTS_DTYPE_F16);
    assert_int_equal(xtts_dtype_parse("float32"), XTTS_DTYPE_F32);
    assert_int_equal(xtts_dtype_parse("bf16"), -1);
    assert_int_equal(xtts_dtype_parse(NULL), -1);
    assert_string_equal(xtts_dtype_name(XTTS_DTYPE_F16), "fp16");
    assert_string_equal(xtts_dtype_name(XTTS_DTYPE_F32), "fp32");
    assert_int_equal(xtts_dtype_size(XTTS_DTYPE_F16), 2);
    assert_int_equal(xtts_dtype_size(XTTS_DTYPE_F32), 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_every_field_fp32),
        cmocka_unit_test(round_trip_keeps_every_field_fp16),
        cmocka_unit_test(round_trip_keeps_every_field_fp32_shuffled),
        cmocka_unit_test(round_trip_keeps_every_field_fp16_shuffled),
        cmocka_unit_test(shuffled_and_plain_records_decode_to_the_same_mel),
        cmocka_unit_test(shuffled_fp16_decodes_like_plain_for_every_width_and_output_dtype),
        cmocka_unit_test(streaming_decode_writes_the_same_values_at_any_alignment),
        cmocka_unit_test(encoding_is_deterministic),
        cmocka_unit_test(decoding_into_larger_buffers_pads_columns_and_leaves_the_rest),
        cmocka_unit_test(one_decoder_serves_records_of_growing_and_shrinking_size),
        cmocka_unit_test(empty_token_list_and_empty_id_round_trip),
        cmocka_unit_test(encoder_rejects_lengths_beyond_padding_and_limits),
        cmocka_unit_test(every_single_byte_change_is_detected),
        cmocka_unit_test(every_frame_header_bit_of_a_large_record_is_covered),
        cmocka_unit_test(every_truncation_and_extension_is_detected),
        cmocka_unit_test(buffers_too_small_are_refused_without_writing),
        cmocka_unit_test(forged_headers_with_valid_crc_are_refused),
        cmocka_unit_test(header_claiming_a_payload_over_the_limit_is_refused),
        cmocka_unit_test(frame_swapped_in_from_another_record_is_refused),
        cmocka_unit_test(random_bytes_never_decode),
        cmocka_unit_test(dtype_names_parse_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
