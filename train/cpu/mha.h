/* cpu/mha.h — multi-head softmax attention over strided views of q, k and v, with an optional
 * causal mask and key mask: the three attentions of the XTTS GPT — the conditioning encoder's
 * QKVAttention (heads' q, k, v interleaved per head, no mask), the perceiver's cross attention (q
 * from the latents, k and v from [latents ; context]) and GPT-2's causal attention with the
 * padding masks of HF's attention_mask (xtts_mha_shape, train/model_internal.h). One (batch row,
 * head) per thread: its outputs and gradients are its own columns, so no two threads write the
 * same value.
 *
 * A head's k and v are first copied, as rows (Tk, hs) and transposed (hs, Tk), into the thread's
 * part of the caller's scratch, so that every inner loop is an axpy along contiguous memory,
 * which vectorizes without reordering a sum; the few sums (softmax's, dot(p, dp)) run in key
 * order in double or float alike in every copy.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define mha_keys LOOPS_NAME(mha_keys)
#define mha_pack LOOPS_NAME(mha_pack)
#define mha_row_probs LOOPS_NAME(mha_row_probs)
#define mha_forward LOOPS_NAME(mha_forward)
#define mha_row_backward LOOPS_NAME(mha_row_backward)
#define mha_unpack_add LOOPS_NAME(mha_unpack_add)
#define mha_backward LOOPS_NAME(mha_backward)

/* keys query i may see: j < *n, and key_mask where there is one */
static inline int mha_keys(const xtts_mha_shape *s, int i) { return s->causal && i + 1 < s->Tk ? i + 1 : s->Tk; }

/* x (rows of hs at stride t) into xr (T, hs) and xt (hs, T) */
static void mha_pack(float *xr, float *xt, const float *x, size_t t, int T, int hs) {
    for (int j = 0; j < T; j++)
        for (int c = 0; c < hs; c++) xr[(size_t)j * hs + c] = xt[(size_t)c * T + j] = x[(size_t)j * t + c];
}

/* scores of query q against the keys (kt is (hs, Tk)), masked and softmaxed into a[0..Tk) */
static void mha_row_probs(const xtts_mha_shape *s, int b, int i, const float *q, const float *kt, float *a) {
    int Tk = s->Tk, n = mha_keys(s, i);
    for (int j = 0; j < n; j++) a[j] = 0.0f;
    for (int c = 0; c < s->hs; c++) {
        float qc = q[c] * s->scale;
        const float *kr = kt + (size_t)c * Tk;
        for (int j = 0; j < n; j++) a[j] += qc * kr[j];
    }
    const uint8_t *km = s->key_mask ? s->key_mask + (size_t)b * Tk : NULL;
    float mx = -INFINITY;
    for (int j = 0; j < n; j++)
        if (!km || km[j]) mx = a[j] > mx ? a[j] : mx;
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
        a[j] = km && !km[j] ? 0.0f : expf(a[j] - mx);
        sum += a[j];
    }
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < n; j++) a[j] *= inv;
    for (int j = n; j < Tk; j++) a[j] = 0.0f;
}

static void mha_forward(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                      const float *v) {
    int hs = s->hs, Tq = s->Tq, Tk = s->Tk;
#pragma omp parallel num_threads(s->threads)
    {
        float *kr = s->scratch + (size_t)omp_get_thread_num() * xtts_mha_scratch_per_thread(s);
        float *kt = kr + (size_t)hs * Tk, *vr = kt + (size_t)hs * Tk, *vt = vr + (size_t)hs * Tk;
#pragma omp for schedule(static)
        for (int bh = 0; bh < s->B * s->NH; bh++) {
            int b = bh / s->NH, h = bh % s->NH;
            mha_pack(kr, kt, k + b * s->k_b + h * s->k_h, s->k_t, Tk, hs);
            mha_pack(vr, vt, v + b * s->v_b + h * s->v_h, s->v_t, Tk, hs);
            for (int i = 0; i < Tq; i++) {
                float *a = att + ((size_t)bh * Tq + i) * Tk;
                mha_row_probs(s, b, i, q + b * s->q_b + h * s->q_h + i * s->q_t, kt, a);
                int n = mha_keys(s, i);
                float *o = out + b * s->o_b + h * s->o_h + i * s->o_t;
                for (int c = 0; c < hs; c++) o[c] = 0.0f;
                for (int j = 0; j < n; j++) {
                    const float *vj = vr + (size_t)j * hs;
                    for (int c = 0; c < hs; c++) o[c] += a[j] * vj[c];
                }
            }
        }
    }
}

/* one query row backwards: dkt, dvt are (hs, Tk) and take the keys' and values' gradients */
static void mha_row_backward(const xtts_mha_shape *s, int i, const float *a, const float *dout, const float *q,
                             float *dq, const float *kr, const float *kt, const float *vt, float *dkt, float *dvt,
                             float *dp) {
    int hs = s->hs, Tk = s->Tk, n = mha_keys(s, i);
    for (int j = 0; j < n; j++) dp[j] = 0.0f;
    for (int c = 0; c < hs; c++) {
        float d = dout[c];
        const float *vr = vt + (size_t)c * Tk;
        float *dvr = dvt + (size_t)c * Tk;
        for (int j = 0; j < n; j++) {
            dp[j] += d * vr[j];
            dvr[j] += a[j] * d;
        }
    }
    double dot = 0.0;
    for (int j = 0; j < n; j++) dot += (double)a[j] * dp[j];
    for (int j = 0; j < n; j++) dp[j] = a[j] * (dp[j] - (float)dot) * s->scale; /* d(score) */
    for (int c = 0; c < hs; c++) {
        float *dkr = dkt + (size_t)c * Tk, qc = q[c];
        for (int j = 0; j < n; j++) dkr[j] += dp[j] * qc;
    }
    for (int j = 0; j < n; j++) {
        const float *kj = kr + (size_t)j * hs;
        for (int c = 0; c < hs; c++) dq[c] += dp[j] * kj[c];
    }
    (void)kt;
}

/* xt (hs, T) added into x (rows of hs at stride t) */
static void mha_unpack_add(float *x, const float *xt, size_t t, int T, int hs) {
    for (int j = 0; j < T; j++)
        for (int c = 0; c < hs; c++) x[(size_t)j * t + c] += xt[(size_t)c * T + j];
}

static void mha_backward(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *att) {
    int hs = s->hs, Tq = s->Tq, Tk = s->Tk;
    size_t plane = (size_t)hs * Tk;
#pragma omp parallel num_threads(s->threads)
    {
        float *kr = s->scratch + (size_t)omp_get_thread_num() * xtts_mha_scratch_per_thread(s);
        float *kt = kr + plane, *vr = kt + plane, *vt = vr + plane, *dkt = vt + plane, *dvt = dkt + plane;
        float *dp = dvt + plane;
#pragma omp for schedule(static)
        for (int bh = 0; bh < s->B * s->NH; bh++) {
            int b = bh / s->NH, h = bh % s->NH;
            size_t ko = b * s->k_b + h * s->k_h, vo = b * s->v_b + h * s->v_h, qo = b * s->q_b + h * s->q_h;
            mha_pack(kr, kt, k + ko, s->k_t, Tk, hs);
            mha_pack(vr, vt, v + vo, s->v_t, Tk, hs);
            memset(dkt, 0, 2 * plane * sizeof(float));
            for (int i = 0; i < Tq; i++)
                mha_row_backward(s, i, att + ((size_t)bh * Tq + i) * Tk, dout + b * s->o_b + h * s->o_h + i * s->o_t,
                                 q + qo + i * s->q_t, dq + qo + i * s->q_t, kr, kt, vt, dkt, dvt, dp);
            mha_unpack_add(dk + ko, dkt, s->k_t, Tk, hs);
            mha_unpack_add(dv + vo, dvt, s->v_t, Tk, hs);
        }
    }
}
