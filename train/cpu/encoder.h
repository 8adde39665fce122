/* cpu/encoder.h — the CPU loops of the input layer: text tokens and their positions, and the
 * previous mel frame projected to the model's width plus the mel positions (train/model.h says
 * what a batch row holds). One forward/backward pair; shapes in the comments.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 * The embedding tables' gradients are summed serially in (b,t) order (rows of a table are
 * shared between positions), the projection's by threads that each own a row.
 */
#define encoder_forward LOOPS_NAME(encoder_forward)
#define encoder_backward LOOPS_NAME(encoder_backward)

/* out is (B,T,C). Text positions: wte[token] + wpe_text[t]. Mel position j:
 * melin_w . frame(j-1) + melin_b + wpe_mel[j], frame(-1) = mel_start. Padding: 0. */
static void encoder_forward(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
                            const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start,
                            int C, int M) {
    int B = bt->B, T = bt->T;
    /* melin_w^T (M,C): a frame's projection then runs along contiguous channels, the same
     * sums in the same order as the dot products (without the memory: the dot products) */
    float *wt = malloc((size_t)M * C * sizeof(float));
    if (wt)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < M; k++) wt[(size_t)k * C + c] = melin_w[(size_t)c * M + k];
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            float *o = out + ((size_t)b * T + t) * C;
            int nt = bt->n_text[b], nf = bt->n_frames[b];
            if (nf == 0) nt = 0; /* an empty row carries nothing */
            if (t < nt) {
                const float *e = wte + (size_t)bt->text[(size_t)b * bt->text_stride + t] * C;
                const float *p = wpe_text + (size_t)t * C;
                for (int i = 0; i < C; i++) o[i] = e[i] + p[i];
            } else if (t < nt + nf) {
                int j = t - nt;
                const float *x = j == 0 ? mel_start : bt->mel + ((size_t)b * bt->mel_stride + (j - 1)) * M;
                const float *p = wpe_mel + (size_t)j * C;
                if (wt) {
                    for (int c = 0; c < C; c++) o[c] = melin_b[c];
                    for (int k = 0; k < M; k++)
                        for (int c = 0; c < C; c++) o[c] += wt[(size_t)k * C + c] * x[k];
                    for (int c = 0; c < C; c++) o[c] += p[c];
                } else {
                    for (int c = 0; c < C; c++) {
                        const float *w = melin_w + (size_t)c * M;
                        float s = melin_b[c];
                        for (int k = 0; k < M; k++) s += w[k] * x[k];
                        o[c] = s + p[c];
                    }
                }
            } else {
                memset(o, 0, (size_t)C * sizeof(float));
            }
        }
    }
    free(wt);
}

static void encoder_backward(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                             float *dmel_start, const float *dout, const xtts_model_batch *bt, const float *mel_start,
                             const float *melin_w, int C, int M) {
    int B = bt->B, T = bt->T;
    /* Embedding tables: rows are shared between positions, so sum serially in (b,t) order. */
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        for (int t = 0; t < nt + nf; t++) {
            const float *d = dout + ((size_t)b * T + t) * C;
            float *e = t < nt ? dwte + (size_t)bt->text[(size_t)b * bt->text_stride + t] * C : NULL;
            float *p = t < nt ? dwpe_text + (size_t)t * C : dwpe_mel + (size_t)(t - nt) * C;
            for (int i = 0; i < C; i++) {
                if (e) e[i] += d[i];
                p[i] += d[i];
            }
        }
    }
    /* The frame projection: each c owns its row of melin_w. */
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float *dw = dmelin_w + (size_t)c * M;
        for (int b = 0; b < B; b++) {
            int nt = bt->n_text[b], nf = bt->n_frames[b];
            if (nf == 0) continue;
            for (int j = 0; j < nf; j++) {
                float d = dout[((size_t)b * T + nt + j) * C + c];
                const float *x = j == 0 ? mel_start : bt->mel + ((size_t)b * bt->mel_stride + (j - 1)) * M;
                for (int k = 0; k < M; k++) dw[k] += d * x[k];
                dmelin_b[c] += d;
            }
        }
    }
    /* mel_start: only mel position 0 of each row reads it. */
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        const float *d = dout + ((size_t)b * T + nt) * C;
        for (int c = 0; c < C; c++) {
            const float *w = melin_w + (size_t)c * M;
            for (int k = 0; k < M; k++) dmel_start[k] += d[c] * w[k];
        }
    }
}
