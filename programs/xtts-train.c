/* xtts-train — a lean trainer that reads only an xtts cache (docs/xtts-train.md). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "common/xtts_common.h"
#include "train/trainer.h"

static void usage(FILE *f) {
    fprintf(f,
            "Usage: xtts-train --cache DIR [OPTIONS]\n"
            "Train a decoder-only transformer (text tokens -> mel frames) on an xtts cache.\n"
            "\n"
            "  --cache DIR            the cache (manifest.json and shards)\n"
            "  --model tiny|small|base  size: 2x128x4, 6x384x6, 12x768x12 (default tiny)\n"
            "  --model xtts-gpt       XTTS-v2's GPT as Coqui's GPTTrainer trains it (docs/xtts-train.md), with:\n"
            "    --config FILE        the XTTS model folder's config.json (vocab.json beside it)\n"
            "    --init FILE          its model.pth or a GPTTrainer checkpoint (default: Coqui's initialization)\n"
            "    --codes DIR          the cache's codes directory (default: its only one)\n"
            "    --eval-only          print the validation split's mean losses of the weights, then exit\n"
            "    --grad-accum N       batches per optimizer step, as Trainer's grad_accum_steps (default 1)\n"
            "  --layers N --width N --heads N   override the size's fields\n"
            "  --steps N              steps of the schedule (default 1000)\n"
            "  --stop-after N         stop after N steps of this run (the schedule still spans --steps)\n"
            "  --batch-size N         records per step (default 8)\n"
            "  --lr X                 peak learning rate (default 3e-4)\n"
            "  --min-lr-frac X        cosine floor as a fraction of --lr (default 0.1)\n"
            "  --warmup N             linear warmup steps (default min(100, steps/10))\n"
            "  --weight-decay X       AdamW decoupled weight decay (default 0.01)\n"
            "  --clip X               max global gradient norm, 0 = off (default 1)\n"
            "  --stop-weight X        positive weight of the stop-frame BCE (default 5)\n"
            "  --seed N               initial weights and shuffling (default 1337)\n"
            "  -j, --threads N        OpenMP threads of the model (default: OpenMP's)\n"
            "  --loader-threads N     decoding threads of the loader (default 2)\n"
            "  --ckpt DIR             write DIR/train.ckpt at the end and every --ckpt-every steps\n"
            "  --ckpt-every N         checkpoint period in steps (default: only at the end)\n"
            "  --resume PATH          continue from a checkpoint file or a --ckpt directory\n"
            "  --eval-every N         validation loss on the cache's val split every N steps (a cache\n"
            "                         without one: xtts-melcache --val-fraction F builds one)\n"
            "  --log-json FILE        one JSON object per step, then a summary (- = stdout)\n"
            "  --log-every N          a line on stderr every N steps (default 1)\n"
            "  --skip-corrupt         skip a corrupt record with a counted warning instead of stopping\n"
            "  --loader-only          run the loader alone for --steps batches and report its rate\n"
            "  --device auto|cpu|cuda[:N]  (default auto: the CPU when no CUDA path or device is usable)\n"
            "  --precision P          matrix products on a CUDA device: fp32 (default), tf32, or bf16\n"
            "                         (bf16 tensor cores, fp32 weights, optimizer and loss); the CPU is fp32\n"
            "  -h, --help, -V, --version\n"
            "Environment: XTTS_CPU=avx512|avx2|baseline caps the instruction set of the CPU loops (default:\n"
            "the widest the CPU has; every level computes the same bits).\n"
            "Exit: 0 done, 1 usage, 2 the run stopped (bad cache, checkpoint mismatch, no device).\n");
}

enum {
    O_CACHE = 256, O_MODEL, O_LAYERS, O_WIDTH, O_HEADS, O_STEPS, O_STOP_AFTER, O_BATCH, O_LR, O_MINLR, O_WARMUP,
    O_WD, O_CLIP, O_STOPW, O_SEED, O_THREADS, O_LTHREADS, O_CKPT, O_CKPT_EVERY, O_RESUME, O_EVAL, O_JSON,
    O_LOG_EVERY, O_SKIP, O_LOADER_ONLY, O_DEVICE, O_PRECISION, O_HELP, O_VERSION, O_CONFIG, O_INIT, O_CODES,
    O_EVAL_ONLY, O_GRAD_ACCUM
};

/* main's answer from a step that may end the program: go on, or exit with the code. */
enum { GO_ON = -1 };

#define LONG_ARG(lo, hi, dst)                                                                        \
    do {                                                                                             \
        if (xtts_parse_long(optarg, lo, hi, &v)) {                                                   \
            fprintf(stderr, "xtts-train: --%s %s: expected an integer in %ld..%ld\n",              \
                    longopts[c - O_CACHE].name, optarg, (long)(lo), (long)(hi));                     \
            return 1;                                                                                \
        }                                                                                            \
        dst = v;                                                                                     \
    } while (0)
#define DOUBLE_ARG(lo, hi, dst)                                                                      \
    do {                                                                                             \
        if (xtts_parse_double(optarg, lo, hi, &d)) {                                                 \
            fprintf(stderr, "xtts-train: --%s %s: expected a number in %g..%g\n",                  \
                    longopts[c - O_CACHE].name, optarg, (double)(lo), (double)(hi));                 \
            return 1;                                                                                \
        }                                                                                            \
        dst = (float)d;                                                                              \
    } while (0)

/* One option c of the command line, its argument in optarg (longopts names it in messages):
 * GO_ON, or the exit code (0 after --help and --version). */
static int parse_option(int c, const struct option *longopts, xtts_train_options *o) {
    long v;
    double d;
    switch (c) {
    case O_CACHE: o->cache_dir = optarg; break;
    case O_MODEL: o->model_size = optarg; break;
    case O_LAYERS: LONG_ARG(1, 256, o->n_layer); break;
    case O_WIDTH: LONG_ARG(1, 16384, o->channels); break;
    case O_HEADS: LONG_ARG(1, 1024, o->n_head); break;
    case O_STEPS: LONG_ARG(1, 1000000000L, o->steps); break;
    case O_STOP_AFTER: LONG_ARG(1, 1000000000L, o->stop_after); break;
    case O_BATCH: LONG_ARG(1, 65536, o->batch_size); break;
    case O_LR: DOUBLE_ARG(0, 10, o->optim.lr); o->lr_set = 1; break;
    case O_MINLR: DOUBLE_ARG(0, 1, o->optim.min_lr_frac); break;
    case O_WARMUP: LONG_ARG(0, 1000000000L, o->optim.warmup_steps); break;
    case O_WD: DOUBLE_ARG(0, 10, o->optim.weight_decay); o->wd_set = 1; break;
    case O_CLIP: DOUBLE_ARG(0, 1e9, o->optim.clip); o->clip_set = 1; break;
    case O_STOPW: DOUBLE_ARG(0, 1e6, o->stop_pos_weight); break;
    case O_SEED: {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(optarg, &end, 10);
        if (!*optarg || *end || optarg[0] == '-') {
            fprintf(stderr, "xtts-train: --seed %s: expected a non-negative integer\n", optarg);
            return 1;
        }
        o->seed = s;
        break;
    }
    case 'j': /* -j is --threads, and its messages name --threads */
        c = O_THREADS;
        /* fall through */
    case O_THREADS: LONG_ARG(1, 4096, o->threads); break;
    case O_LTHREADS: LONG_ARG(1, 256, o->loader_threads); break;
    case O_CKPT: o->ckpt_dir = optarg; break;
    case O_CKPT_EVERY: LONG_ARG(1, 1000000000L, o->ckpt_every); break;
    case O_RESUME: o->resume = optarg; break;
    case O_EVAL: LONG_ARG(1, 1000000000L, o->eval_every); break;
    case O_JSON: o->log_json = optarg; break;
    case O_LOG_EVERY: LONG_ARG(1, 1000000000L, o->log_every); break;
    case O_SKIP: o->skip_corrupt = 1; break;
    case O_LOADER_ONLY: o->loader_only = 1; break;
    case O_DEVICE: o->device = optarg; break;
    case O_PRECISION: o->precision = optarg; break;
    case O_CONFIG: o->gpt_config = optarg; break;
    case O_INIT: o->gpt_init = optarg; break;
    case O_CODES: o->codes_dir = optarg; break;
    case O_EVAL_ONLY: o->eval_only = 1; break;
    case O_GRAD_ACCUM: LONG_ARG(1, 1000000, o->grad_accum); break;
    case 'h':
    case O_HELP: usage(stdout); return 0;
    case 'V':
    case O_VERSION: printf("xtts-train %s\n", XTTS_VERSION); return 0;
    default: xtts_usage_hint("xtts-train"); return 1;
    }
    return GO_ON;
}

/* The command line into o: GO_ON, or the exit code. */
static int parse_args(int argc, char **argv, xtts_train_options *o) {
    static const struct option longopts[] = {
        {"cache", required_argument, 0, O_CACHE},       {"model", required_argument, 0, O_MODEL},
        {"layers", required_argument, 0, O_LAYERS},     {"width", required_argument, 0, O_WIDTH},
        {"heads", required_argument, 0, O_HEADS},       {"steps", required_argument, 0, O_STEPS},
        {"stop-after", required_argument, 0, O_STOP_AFTER}, {"batch-size", required_argument, 0, O_BATCH},
        {"lr", required_argument, 0, O_LR},             {"min-lr-frac", required_argument, 0, O_MINLR},
        {"warmup", required_argument, 0, O_WARMUP},     {"weight-decay", required_argument, 0, O_WD},
        {"clip", required_argument, 0, O_CLIP},         {"stop-weight", required_argument, 0, O_STOPW},
        {"seed", required_argument, 0, O_SEED},         {"threads", required_argument, 0, O_THREADS},
        {"loader-threads", required_argument, 0, O_LTHREADS}, {"ckpt", required_argument, 0, O_CKPT},
        {"ckpt-every", required_argument, 0, O_CKPT_EVERY}, {"resume", required_argument, 0, O_RESUME},
        {"eval-every", required_argument, 0, O_EVAL},   {"log-json", required_argument, 0, O_JSON},
        {"log-every", required_argument, 0, O_LOG_EVERY}, {"skip-corrupt", no_argument, 0, O_SKIP},
        {"loader-only", no_argument, 0, O_LOADER_ONLY}, {"device", required_argument, 0, O_DEVICE},
        {"precision", required_argument, 0, O_PRECISION}, {"help", no_argument, 0, O_HELP},
        {"version", no_argument, 0, O_VERSION},         {"config", required_argument, 0, O_CONFIG},
        {"init", required_argument, 0, O_INIT},         {"codes", required_argument, 0, O_CODES},
        {"eval-only", no_argument, 0, O_EVAL_ONLY},     {"grad-accum", required_argument, 0, O_GRAD_ACCUM},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "j:hV", longopts, NULL)) != -1) {
        int rc = parse_option(c, longopts, o);
        if (rc != GO_ON) return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "xtts-train: unexpected argument '%s' (the cache is given with --cache)\n", argv[optind]);
        return 1;
    }
    if (!o->cache_dir) {
        fprintf(stderr, "xtts-train: --cache DIR is required (see --help)\n");
        return 1;
    }
    return GO_ON;
}

int main(int argc, char **argv) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    xtts_check_stdout_at_exit("xtts-train");
    xtts_train_options o;
    xtts_train_options_defaults(&o);
    int rc = parse_args(argc, argv, &o);
    if (rc != GO_ON) return rc;
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_train_run(&o, &err);
    if (st) {
        xtts_error_print("xtts-train", &err);
        /* a failed --log-json - is that line already: not a second one at exit */
        if (ferror(stdout)) xtts_stdout_error_reported();
        return xtts_exit_code(st);
    }
    return 0;
}
