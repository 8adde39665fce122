/* cpu/loss.h — the CPU loop of the model's loss and its gradient in one pass: the mel head's
 * L1 over real frames and mel channels, and the stop head's weighted BCE with logits
 * (train/train_math.h) over real frames (the last frame of a row is the positive). Sums in
 * double, in (b, frame) order.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define mel_stop_loss_forward_backward LOOPS_NAME(mel_stop_loss_forward_backward)

/* head is (B,T,M+1): M mel predictions and a stop logit per position. */
static int mel_stop_loss_forward_backward(float *mel_loss, float *stop_loss, float *dhead, const float *head,
                                          const xtts_model_batch *bt, int M, float pos_weight) {
    int B = bt->B, T = bt->T, M1 = M + 1;
    int frames = 0;
    for (int b = 0; b < B; b++) frames += bt->n_frames[b];
    if (dhead) memset(dhead, 0, (size_t)B * T * M1 * sizeof(float));
    if (frames == 0) {
        *mel_loss = 0.0f;
        *stop_loss = 0.0f;
        return 0;
    }
    double l1 = 0.0, bce = 0.0;
    float mel_scale = 1.0f / ((float)frames * M), stop_scale = 1.0f / (float)frames;
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        for (int j = 0; j < nf; j++) {
            const float *h = head + ((size_t)b * T + nt + j) * M1;
            const float *y = bt->mel + ((size_t)b * bt->mel_stride + j) * M;
            float *dh = dhead ? dhead + ((size_t)b * T + nt + j) * M1 : NULL;
            for (int k = 0; k < M; k++) {
                float diff = h[k] - y[k];
                l1 += fabsf(diff);
                if (dh) dh[k] = (diff > 0.0f ? 1.0f : diff < 0.0f ? -1.0f : 0.0f) * mel_scale;
            }
            float target = j == nf - 1 ? 1.0f : 0.0f;
            bce += xtts_bce_logits(h[M], target, pos_weight);
            if (dh) dh[M] = xtts_bce_logits_grad(h[M], target, pos_weight) * stop_scale;
        }
    }
    *mel_loss = (float)(l1 / ((double)frames * M));
    *stop_loss = (float)(bce / frames);
    return frames;
}
