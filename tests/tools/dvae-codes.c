/* dvae-codes — the DVAE codes of mel clips through formats/model/torch_dvae.h and kernels/dvae.h,
 * for comparing with Coqui's DiscreteVAE at XTTS-v2's sizes (tests/golden/check_dvae_full.py).
 *
 * Usage: dvae-codes DVAE.pth MEL_NORMS.pth CLIPS.tsv
 *   CLIPS.tsv: one clip a line: name, frames, path of a little-endian float32 file holding
 *   the clip's log-mel (n_mels, frames) before the norms.
 * Output: per clip: name, then its codes separated by spaces; on stderr, the seconds spent
 * encoding and the rate in GFLOP/s (the encoder's multiply-adds counted twice).
 * Exit: 0, 1 usage, 2 input error (the message names the file and the key).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/model/torch_dvae.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Multiply-adds of the encoder and the search for a clip of frames frames. */
static double clip_flops(const xtts_dvae_config *c, size_t frames) {
    double t1 = (double)((frames + 1) / 2), t2 = (double)xtts_dvae_codes_len(frames), h = c->hidden, in = 2.0 * h;
    double macs = t1 * h * c->channels * 3 + t2 * in * h * 3 + 3 * t2 * (2 * in * in * 3 + in * in) +
                  t2 * c->codebook_dim * in + t2 * c->codebook_dim * c->num_tokens;
    return 2 * macs;
}

static int encode_clips(xtts_dvae *d, const xtts_dvae_config *cfg, const float *norms, FILE *list) {
    char line[4096], name[1024], path[2048];
    double spent = 0, flops = 0;
    size_t frames;
    xtts_error err;
    while (fgets(line, sizeof line, list)) {
        if (sscanf(line, "%1023s %zu %2047s", name, &frames, path) != 3 || frames == 0) {
            fprintf(stderr, "dvae-codes: bad clip line: %s", line);
            return 2;
        }
        size_t n = (size_t)cfg->channels * frames, nc = xtts_dvae_codes_len(frames);
        float *mel = malloc(n * sizeof *mel);
        uint16_t *codes = malloc(nc * sizeof *codes);
        FILE *fp = fopen(path, "rb");
        if (!mel || !codes || !fp || fread(mel, sizeof *mel, n, fp) != n) {
            fprintf(stderr, "dvae-codes: %s: cannot read %zu floats\n", path, n);
            return 2;
        }
        fclose(fp);
        for (size_t c = 0; c < (size_t)cfg->channels; c++)
            for (size_t t = 0; t < frames; t++) mel[c * frames + t] /= norms[c];
        double t0 = now_s();
        if (xtts_dvae_encode(d, mel, frames, codes, NULL, &err) != XTTS_OK) {
            fprintf(stderr, "dvae-codes: %s\n", err.msg);
            return 2;
        }
        spent += now_s() - t0;
        flops += clip_flops(cfg, frames);
        printf("%s", name);
        for (size_t k = 0; k < nc; k++) printf("%c%u", k ? ' ' : '\t', codes[k]);
        printf("\n");
        free(mel);
        free(codes);
    }
    fprintf(stderr, "dvae-codes: %.3f s encoding, %.1f GFLOP/s\n", spent, spent > 0 ? flops / spent * 1e-9 : 0.0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: dvae-codes DVAE.pth MEL_NORMS.pth CLIPS.tsv\n");
        return 1;
    }
    xtts_pth *f = NULL, *nf = NULL;
    xtts_dvae *d = NULL;
    xtts_dvae_weights w;
    const float *norms;
    xtts_error err;
    int rc = 2;
    FILE *list = fopen(argv[3], "r");
    if (!list) fprintf(stderr, "dvae-codes: %s: cannot open\n", argv[3]);
    else if (xtts_pth_open(argv[1], &f, &err) != XTTS_OK || xtts_dvae_weights_from_pth(f, &w, &err) != XTTS_OK ||
             xtts_pth_open(argv[2], &nf, &err) != XTTS_OK ||
             xtts_mel_norms_from_pth(nf, w.cfg.channels, &norms, &err) != XTTS_OK || xtts_dvae_new(&w, &d, &err) != XTTS_OK)
        fprintf(stderr, "dvae-codes: %s\n", err.msg);
    else
        rc = encode_clips(d, &w.cfg, norms, list);
    if (list) fclose(list);
    xtts_dvae_delete(d);
    xtts_pth_close(f);
    xtts_pth_close(nf);
    return rc;
}
