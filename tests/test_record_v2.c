/* test_record_v2.c — record version 2 (formats/cache.md 3.2-3.4): sections round trip
 * (tokens, mel of the true frames, text, waveform as int16 + zstd or FLAC), every byte
 * covered by a checksum, version-1 records still read next to version-2 ones, the lengths
 * index and its reader API, aligned segments checked against the mel recomputed on the
 * waveform slice (kernels/mel.h), and xtts_cache_verify on caches with waveforms.
 */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/store/read/reader.h"
#include "cache/audit/verify.h"
#include "prep/melcache/recompute.h"
#include "cache/store/writer.h"
#include "formats/record.h"
#include "formats/record_internal.h"
#include "kernels/mel.h"
#include "tests/cache_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void tmp_dir(char *dir, size_t cap) {
    const char *base = getenv("TMPDIR");
    snprintf(dir, cap, "%s/xtts-v2-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static void tmp_remove(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

typedef struct {
    int32_t tokens[32];
    float mel[8 * 40];
    int16_t wave[40 * 64];
    xtts_record_input in;
} sample;

/* n_tokens of 32 padded, n_frames of 40 padded, 8 mels; waveform of n_samples. */
static void sample_make(sample *s, uint32_t n_tokens, uint32_t n_frames, uint32_t n_samples) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 32; i++) s->tokens[i] = i < (int)n_tokens ? 7 * i + 3 : 0;
    for (int c = 0; c < 8; c++)
        for (int t = 0; t < 40; t++) s->mel[c * 40 + t] = t < (int)n_frames ? sinf(0.3f * c + 0.1f * t) - 3.0f : -11.5f;
    for (uint32_t k = 0; k < n_samples; k++) s->wave[k] = (int16_t)(((int)k * 977) % 30001 - 15000);
    xtts_record_input in = {.id = "spk1/utt-0007", .split = 1, .speaker_id = 3, .lang_id = 5, .n_samples = n_samples,
                            .n_tokens = n_tokens, .tokens_padded = 32, .n_frames = n_frames, .frames_padded = 40,
                            .n_mels = 8, .pad_value = -11.5f, .tokens = s->tokens, .mel = s->mel, .pad_token = 0,
                            .trim_start = 1234, .text = "Hello, World! 42", .text_norm = "hello, world! forty-two",
                            .wave = s->wave, .sample_rate = 22050};
    s->in = in;
}

static uint8_t *encode(const sample *s, xtts_dtype dtype, unsigned flags, xtts_audio_store audio, size_t *len) {
    xtts_record_encoder *enc;
    xtts_record_encoder_new(dtype, 3, flags, &enc);
    assert_non_null(enc);
    xtts_record_encoder_set_audio(enc, audio);
    const uint8_t *out;
    xtts_error err;
    if (xtts_record_encode(enc, &s->in, &out, len, &err)) fail_msg("encode: %s", err.msg);
    uint8_t *copy = malloc(*len);
    memcpy(copy, out, *len);
    xtts_record_encoder_delete(enc);
    return copy;
}

/* ---- the record codec ------------------------------------------------------------------------ */

static void round_trip(xtts_dtype dtype, unsigned flags, xtts_audio_store audio) {
    sample s;
    sample_make(&s, 11, 23, 23 * 64);
    size_t len;
    uint8_t *rec = encode(&s, dtype, flags, audio, &len);
    xtts_record_header h;
    xtts_error err;
    assert_int_equal(xtts_record_parse_header(rec, len, &h, &err), XTTS_OK);
    assert_int_equal(h.version, 2);
    assert_int_equal(h.n_sections, audio ? 4 : 3);
    assert_int_equal(h.audio, audio);
    assert_int_equal(h.pad_token, 0);
    assert_int_equal(h.trim_start, 1234);
    assert_int_equal(h.n_samples, 23 * 64);
    assert_string_equal(h.id, "spk1/utt-0007");
    /* only the true frames are stored: the mel section holds 8 x 23 values */
    assert_int_equal(h.sections[1].raw_bytes, 8 * 23 * xtts_dtype_size(dtype));
    assert_int_equal(h.sections[0].raw_bytes, 4 * 11);

    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    int32_t tok[40];
    float mel[8 * 48];
    for (int i = 0; i < 40; i++) tok[i] = -77;
    assert_int_equal(xtts_record_decode(dec, rec, len, &h, tok, 40, mel, XTTS_DTYPE_F32, 8, 48, &err), XTTS_OK);
    for (int i = 0; i < 32; i++) assert_int_equal(tok[i], s.tokens[i]);
    for (int i = 32; i < 40; i++) assert_int_equal(tok[i], -77); /* beyond tokens_padded: untouched */
    float tol = dtype == XTTS_DTYPE_F16 ? 2e-3f : 0.0f;
    float pad = dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(-11.5f)) : -11.5f;
    for (int c = 0; c < 8; c++)
        for (int t = 0; t < 48; t++) {
            float want = t < 23 ? s.mel[c * 40 + t] : pad;
            assert_true(fabsf(mel[c * 48 + t] - want) <= tol);
        }
    /* fp16 output of the same record */
    uint16_t mel16[8 * 48];
    assert_int_equal(xtts_record_decode(dec, rec, len, NULL, NULL, 0, mel16, XTTS_DTYPE_F16, 8, 48, &err), XTTS_OK);
    for (int i = 0; i < 8 * 48; i++) assert_true(fabsf(xtts_f16_to_f32(mel16[i]) - mel[i]) <= 4e-3f);

    const char *o, *n;
    size_t ol, nl;
    assert_int_equal(xtts_record_decode_text(dec, rec, len, &o, &ol, &n, &nl, &err), XTTS_OK);
    assert_string_equal(o, "Hello, World! 42");
    assert_int_equal(ol, strlen(o));
    assert_string_equal(n, "hello, world! forty-two");
    assert_int_equal(nl, strlen(n));

    int16_t w[23 * 64];
    if (audio == XTTS_AUDIO_NONE) {
        assert_int_equal(xtts_record_decode_wave(dec, rec, len, w, 0, 1, &err), XTTS_ENOTFOUND);
    } else {
        assert_int_equal(xtts_record_decode_wave(dec, rec, len, w, 0, 23 * 64, &err), XTTS_OK);
        assert_memory_equal(w, s.wave, sizeof w); /* lossless */
        assert_int_equal(xtts_record_decode_wave(dec, rec, len, w, 100, 5, &err), XTTS_OK);
        assert_memory_equal(w, s.wave + 100, 5 * sizeof *w);
        assert_int_equal(xtts_record_decode_wave(dec, rec, len, w, 23 * 64 - 2, 3, &err), XTTS_ERANGE);
    }
    assert_int_equal(xtts_record_check(dec, rec, len, &err), XTTS_OK);
    xtts_lengths l, u;
    uint8_t packed[XTTS_LENGTHS_BYTES];
    xtts_lengths_pack(&h, packed);
    assert_int_equal(xtts_lengths_unpack(packed, sizeof packed, &u, &err), XTTS_OK);
    xtts_lengths_from_header(&h, &l);
    assert_memory_equal(&l, &u, sizeof l);
    assert_int_equal(u.n_frames, 23);
    assert_int_equal(u.n_tokens, 11);
    assert_int_equal(u.n_samples, 23 * 64);
    assert_int_equal(u.speaker_id, 3);
    assert_int_equal(u.lang_id, 5);
    assert_int_equal(u.split, 1);
    assert_int_equal(u.has_wave, audio != XTTS_AUDIO_NONE);
    xtts_record_decoder_delete(dec);
    free(rec);
}

static void round_trip_fp16_shuffled_no_audio(void **state) {
    (void)state;
    round_trip(XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, XTTS_AUDIO_NONE);
}
static void round_trip_fp32_int16(void **state) {
    (void)state;
    round_trip(XTTS_DTYPE_F32, 0, XTTS_AUDIO_INT16);
}
static void round_trip_fp16_flac(void **state) {
    (void)state;
    round_trip(XTTS_DTYPE_F16, 0, XTTS_AUDIO_FLAC);
}

/* A flip of any bit of a record is caught by xtts_record_check; one inside the mel's
 * section is caught by a mels-only decode too, one in the text or waveform is not seen by
 * a mels-only decode (which never reads them). */
static void every_byte_is_covered(void **state) {
    (void)state;
    sample s;
    sample_make(&s, 5, 9, 9 * 64);
    for (int a = XTTS_AUDIO_INT16; a <= XTTS_AUDIO_FLAC; a++) {
        size_t len;
        uint8_t *rec = encode(&s, XTTS_DTYPE_F16, XTTS_RECORD_SHUFFLED, (xtts_audio_store)a, &len);
        xtts_record_header h;
        xtts_error err;
        assert_int_equal(xtts_record_parse_header(rec, len, &h, &err), XTTS_OK);
        xtts_record_decoder *dec;
        xtts_record_decoder_new(&dec);
        float mel[8 * 40];
        for (size_t i = 0; i < len; i++)
            for (int bit = 0; bit < 8; bit += 3) {
                rec[i] ^= (uint8_t)(1u << bit);
                if (xtts_record_check(dec, rec, len, &err) == XTTS_OK) fail_msg("audio %d: flip at byte %zu bit %d passed", a, i, bit);
                xtts_status st = xtts_record_decode(dec, rec, len, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 8, 40, &err);
                int in_mel = i >= h.sections[1].offset && i < h.sections[1].offset + h.sections[1].stored_bytes;
                if (in_mel && st == XTTS_OK) fail_msg("flip in the mel at %zu passed a mel decode", i);
                if (i >= h.sections[2].offset) assert_int_equal(st, XTTS_OK); /* text, waveform: not read */
                rec[i] ^= (uint8_t)(1u << bit);
            }
        /* truncated at every length: refused, never read out of bounds */
        for (size_t n = 0; n < len; n++) {
            uint8_t *cut = malloc(n ? n : 1);
            memcpy(cut, rec, n);
            assert_int_not_equal(xtts_record_check(dec, cut, n, &err), XTTS_OK);
            free(cut);
        }
        xtts_record_decoder_delete(dec);
        free(rec);
    }
}

/* Version 1 is still written on request and read by the same decoder; a version this
 * build does not know is refused as a version mismatch naming the record. */
static void version_one_still_reads_and_unknown_versions_are_refused(void **state) {
    (void)state;
    sample s;
    sample_make(&s, 6, 17, 0);
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F32, 3, 0, &enc);
    xtts_error err;
    assert_int_equal(xtts_record_encoder_set_version(enc, 3, &err), XTTS_EUSAGE);
    assert_int_equal(xtts_record_encoder_set_version(enc, 1, &err), XTTS_OK);
    const uint8_t *out;
    size_t len;
    assert_int_equal(xtts_record_encode(enc, &s.in, &out, &len, &err), XTTS_OK);
    uint8_t *v1 = malloc(len);
    memcpy(v1, out, len);
    size_t len1 = len;
    xtts_record_encoder_delete(enc);
    size_t len2;
    uint8_t *v2 = encode(&s, XTTS_DTYPE_F32, 0, XTTS_AUDIO_NONE, &len2);
    xtts_record_decoder *dec;
    xtts_record_decoder_new(&dec);
    int32_t t1[32], t2[32];
    float m1[8 * 40], m2[8 * 40];
    xtts_record_header h1, h2;
    assert_int_equal(xtts_record_decode(dec, v1, len1, &h1, t1, 32, m1, XTTS_DTYPE_F32, 8, 40, &err), XTTS_OK);
    assert_int_equal(xtts_record_decode(dec, v2, len2, &h2, t2, 32, m2, XTTS_DTYPE_F32, 8, 40, &err), XTTS_OK);
    assert_int_equal(h1.version, 1);
    assert_int_equal(h2.version, 2);
    assert_memory_equal(t1, t2, sizeof t1);
    assert_memory_equal(m1, m2, sizeof m1); /* the same decoded arrays */
    assert_int_equal(xtts_record_decode_text(dec, v1, len1, NULL, NULL, NULL, NULL, &err), XTTS_ENOTFOUND);
    /* the version field set to 3 and the header CRC recomputed: a clear version error */
    xtts_put_le16(v2 + 4, 3);
    uint32_t crc = xtts_crc32(0, v2, 60);
    xtts_put_le32(v2 + 60, xtts_crc32(crc, v2 + 64, h2.id_len));
    assert_int_equal(xtts_record_parse_header(v2, len2, NULL, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "spk1/utt-0007"));
    assert_non_null(strstr(err.msg, "version 3"));
    xtts_record_decoder_delete(dec);
    free(v1);
    free(v2);
}

/* ---- caches: lengths index, text, waveform, verify ------------------------------------------ */

static void lengths_index_matches_every_header(void **state) {
    (void)state;
    for (int format = 1; format <= 2; format++) {
        char dir[4096];
        tmp_dir(dir, sizeof dir);
        fixture_options o;
        fixture_defaults(&o);
        o.format = format;
        o.audio = format == 2 ? XTTS_AUDIO_INT16 : XTTS_AUDIO_NONE;
        assert_int_equal(fixture_build_writer(dir, &o, 8192, 1, NULL), 0); /* several shards */
        xtts_cache *c;
        xtts_cache_reader *r;
        xtts_error e;
        assert_int_equal(xtts_cache_open(dir, &c, &e), XTTS_OK);
        assert_true(xtts_cache_n_shards(c) > 1);
        assert_int_equal(xtts_cache_has_lengths_index(c), format == 2);
        assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
        uint64_t n = xtts_cache_count(c);
        xtts_lengths *l = calloc(n, sizeof *l);
        assert_int_equal(xtts_cache_lengths(r, l, &e), XTTS_OK);
        for (uint64_t i = 0; i < n; i++) {
            assert_int_equal(l[i].n_frames, fixture_n_frames(&o, (int)i));
            assert_int_equal(l[i].n_tokens, fixture_n_tokens(&o, (int)i));
            assert_int_equal(l[i].n_samples, fixture_n_samples(&o, (int)i));
            assert_int_equal(l[i].speaker_id, i % 3);
            assert_int_equal(l[i].lang_id, i % 2);
            assert_int_equal(l[i].split, i % 5 == 0);
            assert_int_equal(l[i].has_wave, format == 2);
            if (format == 2) {
                const char *t, *nt;
                assert_int_equal(xtts_cache_reader_text(r, i, &t, NULL, &nt, NULL, &e), XTTS_OK);
                char want[64];
                snprintf(want, sizeof want, "Utterance %d.", (int)i);
                assert_string_equal(t, want);
                int16_t w[3];
                assert_int_equal(xtts_cache_reader_wave(r, i, w, 5, 3, &e), XTTS_OK);
                for (int k = 0; k < 3; k++) assert_int_equal(w[k], fixture_wave_value((int)i, 5 + k));
            }
        }
        free(l);
        xtts_cache_reader_delete(r);
        xtts_cache_close(c);
        /* verify: clean, then a lengths entry that disagrees with its record is a fault */
        xtts_verify_options vo;
        xtts_verify_options_defaults(&vo);
        vo.recompute_fn = xtts_recompute_record;
        xtts_verify_report rep;
        assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
        assert_int_equal(rep.faults, 0);
        assert_true(rep.digest_complete);
        if (format == 2) {
            uint8_t key[8], val[XTTS_LENGTHS_BYTES] = {0};
            xtts_put_be64(key, 2);
            xtts_put_le32(val, 999);
            char shard[4200];
            snprintf(shard, sizeof shard, "%s/shard-00000", dir);
            assert_int_equal(fixture_put(shard, "lengths", key, 8, val, sizeof val), 0);
            assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
            assert_int_equal(rep.faults, 1);
        }
        tmp_remove(dir);
    }
}

/* ---- aligned segments --------------------------------------------------------------------- */

/* Build a one-record cache of preset `preset` whose waveform is a chirp with noise and
 * whose mel is computed from it (fp32), then check segments against the mel of the slice. */
static void segment_matches_mel_of_the_slice(const char *preset) {
    char dir[4096];
    tmp_dir(dir, sizeof dir);
    xtts_cache_config cfg;
    xtts_cache_config_defaults(&cfg);
    xtts_error e;
    assert_int_equal(xtts_mel_preset(preset, &cfg.mel, &e), XTTS_OK);
    cfg.dtype = XTTS_DTYPE_F32;
    cfg.audio = XTTS_AUDIO_INT16;
    cfg.max_frames = 400;
    cfg.max_tokens = 8;
    const xtts_mel_params *p = &cfg.mel;
    size_t n = (size_t)p->sample_rate * 2; /* 2 s */
    int16_t *wave = malloc(n * sizeof *wave);
    float *x = malloc(n * sizeof *x);
    uint64_t rng = 12345;
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / p->sample_rate;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        double noise = ((double)(rng >> 11) / 9007199254740992.0 - 0.5) * 0.02;
        x[i] = (float)(0.4 * sin(2 * M_PI * (200 * t + 900 * t * t)) + noise);
    }
    xtts_wave_to_int16(x, n, wave, x);
    xtts_mel *m;
    xtts_mel_new(p, &m, &e);
    assert_non_null(m);
    size_t frames = xtts_mel_n_frames(p, n), got;
    assert_true(frames > 0 && frames <= 400);
    float *mel = calloc((size_t)p->n_mels * 400, sizeof *mel);
    float pad;
    assert_int_equal(xtts_mel_compute(m, x, n, mel, 400, &got, &pad, &e), XTTS_OK);
    assert_int_equal(got, frames);
    int32_t tok[8] = {1, 2, 3, 0, 0, 0, 0, 0};
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F32, 3, 0, &enc);
    xtts_record_encoder_set_audio(enc, XTTS_AUDIO_INT16);
    xtts_record_input in = {.id = "chirp", .n_samples = (uint32_t)n, .n_tokens = 3, .tokens_padded = 8,
                            .n_frames = (uint32_t)frames, .frames_padded = 400, .n_mels = (uint16_t)p->n_mels,
                            .pad_value = pad, .tokens = tok, .mel = mel, .text = "chirp", .text_norm = "chirp",
                            .wave = wave, .sample_rate = (uint32_t)p->sample_rate};
    const uint8_t *rec;
    size_t len;
    assert_int_equal(xtts_record_encode(enc, &in, &rec, &len, &e), XTTS_OK);
    xtts_cache_writer_options wo;
    xtts_cache_writer_options_defaults(&wo, dir);
    xtts_cache_writer *w;
    assert_int_equal(xtts_cache_writer_open(&wo, &cfg, &w, &e), XTTS_OK);
    assert_int_equal(xtts_cache_writer_put(w, 0, "chirp", rec, len, &e), XTTS_OK);
    assert_int_equal(xtts_cache_writer_finish(w, NULL, &e), XTTS_OK);
    xtts_record_encoder_delete(enc);

    xtts_cache *c;
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_open(dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    size_t hop = (size_t)p->hop_samples, L = 32;
    size_t left = p->center ? (size_t)p->n_fft / 2 : (size_t)p->pad_samples;
    float *sw = malloc(L * hop * sizeof *sw), *sm = malloc((size_t)p->n_mels * L * sizeof *sm);
    float *re = calloc((size_t)p->n_mels * (L + 2), sizeof *re);
    size_t checked = 0;
    size_t starts[3] = {0, 57, frames - L};
    for (int k = 0; k < 3; k++) {
        size_t f0 = starts[k];
        assert_int_equal(xtts_cache_reader_segment(r, 0, f0, L, sw, sm, &e), XTTS_OK);
        for (size_t i = 0; i < L * hop; i++) {
            float want = f0 * hop + i < n ? x[f0 * hop + i] : 0.0f;
            assert_true(sw[i] == want);
        }
        size_t rf;
        assert_int_equal(xtts_mel_compute(m, sw, L * hop, re, L + 2, &rf, NULL, &e), XTTS_OK);
        for (size_t j = 0; j < L && j < rf; j++) {
            if (j * hop < left || j * hop - left + (size_t)p->n_fft > L * hop) continue; /* slice edges */
            if ((f0 + j) * hop - left + (size_t)p->n_fft > n) continue; /* reaches past the audio */
            for (int ch = 0; ch < p->n_mels; ch++) {
                float d = fabsf(re[(size_t)ch * (L + 2) + j] - sm[(size_t)ch * L + j]);
                if (d > 1e-3f) fail_msg("%s: start %zu frame %zu channel %d differs by %g", preset, f0, j, ch, d);
            }
            checked++;
        }
    }
    assert_true(checked >= 3 * (L - 2 * (p->n_fft / hop) - 1)); /* interior frames were compared */
    /* out of range, and no waveform in a cache without one */
    assert_int_equal(xtts_cache_reader_segment(r, 0, frames - L + 1, L, sw, sm, &e), XTTS_ERANGE);
    free(sw);
    free(sm);
    free(re);
    free(mel);
    free(wave);
    free(x);
    xtts_mel_delete(m);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    xtts_verify_options vo;
    xtts_verify_options_defaults(&vo);
    vo.recompute_fn = xtts_recompute_record;
    xtts_verify_report rep;
    assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
    assert_int_equal(rep.faults, 0);
    tmp_remove(dir);
}

static void segment_centred_framing_xtts(void **state) {
    (void)state;
    segment_matches_mel_of_the_slice("xtts");
}
static void segment_hifigan_framing(void **state) {
    (void)state;
    segment_matches_mel_of_the_slice("hifigan");
}
static void segment_linear_spectrogram(void **state) {
    (void)state;
    segment_matches_mel_of_the_slice("linear");
}

int main(void) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_fp16_shuffled_no_audio),
        cmocka_unit_test(round_trip_fp32_int16),
        cmocka_unit_test(round_trip_fp16_flac),
        cmocka_unit_test(every_byte_is_covered),
        cmocka_unit_test(version_one_still_reads_and_unknown_versions_are_refused),
        cmocka_unit_test(lengths_index_matches_every_header),
        cmocka_unit_test(segment_centred_framing_xtts),
        cmocka_unit_test(segment_hifigan_framing),
        cmocka_unit_test(segment_linear_spectrogram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
