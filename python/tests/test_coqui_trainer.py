"""xtts_prep.coqui.CachedGPTTrainer under Coqui's own trainer.Trainer, run by
tests/e2e/coqui_trainer.sh in the environment of ../shared/coqui-env (coqui-ai/TTS with
coqui-ai/Trainer, or the idiap fork with its trainer), on a small cache with the audio codes of
a DVAE of XTTS's size, a GPT shrunk to two layers of 64 channels:

- Trainer.fit() for three epochs: every loss finite, the last epoch's mean below the first's,
  each epoch every training record once and in an order of its own, evaluation in the order of
  the eval samples;
- the samples Trainer hands the loader: a filtered list cut by TrainerArgs(small_run=4) gives
  two steps on those four records, and eval samples taken from the train split are evaluated;
- Trainer(continue_path=run) with a new model and config: the weights and AdamW state come
  back, the run goes on for an epoch with a new order;
- cross-class: a run of ours continued by Coqui's GPTTrainer and a run of GPTTrainer (on its own
  data path: load_tts_samples, XTTSDataset, format_batch_on_device with the DVAE) continued by
  ours, both with the model and the optimizer state restored (no "Partial model
  initialization"); with coqui-ai/Trainer also restore_path, which restores the optimizer there;
- the codes our cache holds are those Coqui's format_batch_on_device computes with the DVAE, but
  for near-ties (a few codes whose two entries are as near the latent as float32 can tell); the
  same weights in both classes give the same per-clip eval losses on every clip whose codes are
  all equal;
- the per-step times of both data paths (Trainer's step and loader times, and
  format_batch_on_device's).

Run: test_coqui_trainer.py WORK   (WORK: data/ (LJSpeech layout), cache/ with codes, dvae.pth,
mel_stats.pth, vocab.json; see tests/e2e/coqui_trainer.sh). Prints "coqui-trainer: ..." lines
with the checks and figures; exit 1 on the first failed check.
"""
import logging
import math
import os
import shutil
import sys
import time

if os.environ.get("COQUI_ENV_PRELOAD"):          # the fork's stand-ins (coqui-env/fork-probe)
    __import__(os.environ["COQUI_ENV_PRELOAD"])

import torch  # noqa: E402
from trainer import Trainer, TrainerArgs  # noqa: E402
from TTS.config.shared_configs import BaseDatasetConfig  # noqa: E402
from TTS.tts.datasets import load_tts_samples  # noqa: E402
from TTS.tts.layers.xtts.trainer import gpt_trainer  # noqa: E402
from TTS.tts.layers.xtts.trainer.gpt_trainer import GPTArgs, GPTTrainer, GPTTrainerConfig  # noqa: E402

from xtts_prep import XttsCache  # noqa: E402
from xtts_prep.coqui import CachedGPTTrainer  # noqa: E402

XttsAudioConfig = getattr(gpt_trainer, "XttsAudioConfig", None)
if XttsAudioConfig is None:                       # the fork keeps it in the model's module
    from TTS.tts.models.xtts import XttsAudioConfig
torch.set_num_threads(1)

WORK = sys.argv[1]
CACHE = os.path.join(WORK, "cache")
FLAVOUR = "idiap" if hasattr(Trainer, "_get_model") else "coqui-ai"


def say(msg):
    print("coqui-trainer: [%s] %s" % (FLAVOUR, msg), flush=True)


def check(cond, msg):
    if not cond:
        say("FAIL: " + msg)
        sys.exit(1)
    say("ok: " + msg)


class Log(logging.Handler):
    """Trainer's log lines (restore_model says "Partial model initialization" when it falls back)."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


LOG = Log()
logging.getLogger("trainer").addHandler(LOG)


def config(out, epochs):
    args = GPTArgs(max_conditioning_length=44100, min_conditioning_length=22050, max_wav_length=255995,
                   max_text_length=200, mel_norm_file=os.path.join(WORK, "mel_stats.pth"),
                   dvae_checkpoint=os.path.join(WORK, "dvae.pth"), xtts_checkpoint=None,
                   tokenizer_file=os.path.join(WORK, "vocab.json"),
                   gpt_num_audio_tokens=258, gpt_start_audio_token=256, gpt_stop_audio_token=257,
                   gpt_layers=2, gpt_n_model_channels=64, gpt_n_heads=4,
                   gpt_use_masking_gt_prompt_approach=True, gpt_use_perceiver_resampler=True)
    return GPTTrainerConfig(
        output_path=out, model_args=args, run_name="tiny", project_name="xtts-prep-test", dashboard_logger="tensorboard",
        audio=XttsAudioConfig(sample_rate=22050, dvae_sample_rate=22050, output_sample_rate=24000),
        batch_size=2, eval_batch_size=2, num_loader_workers=0, num_eval_loader_workers=0, epochs=epochs,
        print_step=1000, save_step=1000, save_n_checkpoints=1, save_checkpoints=True, print_eval=False,
        optimizer="AdamW", optimizer_wd_only_on_weights=True, lr=1e-3, training_seed=1234,
        optimizer_params={"betas": [0.9, 0.96], "eps": 1e-8, "weight_decay": 1e-2},
        lr_scheduler="MultiStepLR", lr_scheduler_params={"milestones": [10 ** 6], "gamma": 0.5, "last_epoch": -1},
        test_sentences=[])


def recording(cls):
    """cls with what Trainer did to it recorded: the ids of each epoch's training batches, of
    the eval batches, the training losses, and the seconds of format_batch_on_device."""

    class Recording(cls):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.epochs, self.eval_ids, self.losses, self.prep_s = [], [], [], []

        def on_train_epoch_start(self, trainer):
            super().on_train_epoch_start(trainer)
            self.epochs.append([])

        def format_batch(self, batch):
            ids = [os.path.splitext(os.path.basename(f))[0] for f in batch["filenames"]]
            (self.epochs[-1] if torch.is_grad_enabled() else self.eval_ids).extend(ids)
            return super().format_batch(batch)

        def format_batch_on_device(self, batch):
            t = time.perf_counter()
            out = super().format_batch_on_device(batch)
            self.prep_s.append(time.perf_counter() - t)
            return out

        def train_step(self, batch, criterion):
            out, losses = super().train_step(batch, criterion)
            if torch.is_grad_enabled():
                self.losses.append(float(losses["loss"]))
            return out, losses

    return Recording


Ours, Theirs = recording(CachedGPTTrainer), recording(GPTTrainer)


def trainer(targs, cfg, model, train, evals, out):
    LOG.lines.clear()
    return Trainer(targs, cfg, output_path=out, model=model, train_samples=train, eval_samples=evals,
                   parse_command_line_args=False)


def step_figures(t, model):
    avg = t.keep_avg_train.avg_values
    return "step %.3f s, loader %.4f s, format_batch_on_device %.6f s (mean of %d steps)" % (
        avg["avg_step_time"], avg["avg_loader_time"], sum(model.prep_s) / max(len(model.prep_s), 1),
        len(model.prep_s))


def latest_checkpoint(run):
    from trainer.io import get_last_checkpoint
    return get_last_checkpoint(run)[0]


def restored(t, model, ckpt, what):
    """The model's weights and the optimizer's state are the checkpoint's."""
    state = torch.load(ckpt, map_location="cpu")
    check(not any("Partial model initialization" in line for line in LOG.lines),
          "%s: Trainer restored the model without falling back to a partial initialization" % what)
    own = model.state_dict()
    check(set(own) == set(state["model"]) and all(torch.equal(own[k].cpu(), v) for k, v in state["model"].items()),
          "%s: all %d tensors of the model are the checkpoint's" % (what, len(own)))
    opt = t.optimizer.state_dict()
    want = state["optimizer"]
    same = len(opt["state"]) == len(want["state"]) > 0 and all(
        torch.equal(opt["state"][i]["exp_avg"].cpu(), want["state"][i]["exp_avg"]) for i in want["state"])
    check(same, "%s: the AdamW state of all %d parameters is the checkpoint's" % (what, len(want["state"])))


def main():
    cache = XttsCache(CACHE)
    probe = CachedGPTTrainer(config(os.path.join(WORK, "runs"), 1), CACHE)
    train, val = probe.samples("train"), probe.samples("val")
    ids = {i: cache.get(i)["id"] for i in range(len(cache))}
    train_ids = [ids[s["cache_index"]] for s in train]
    val_ids = [ids[s["cache_index"]] for s in val]
    say("%d train and %d val records" % (len(train), len(val)))

    # ---- three epochs of ours -----------------------------------------------------------
    out = os.path.join(WORK, "runs", "ours")
    model = Ours(config(out, 3), CACHE)
    t = trainer(TrainerArgs(), model.config, model, train, val, out)
    t.fit()
    run_ours, ours_steps = t.output_path, step_figures(t, model)
    check(all(math.isfinite(x) for x in model.losses) and len(model.losses) == 3 * math.ceil(len(train) / 2),
          "fit: %d finite training losses over 3 epochs" % len(model.losses))
    per = len(model.losses) // 3
    first, last = sum(model.losses[:per]) / per, sum(model.losses[-per:]) / per
    check(last < first, "fit: the mean loss falls from %.4f (epoch 1) to %.4f (epoch 3)" % (first, last))
    check(len(model.epochs) == 3 and all(sorted(e) == sorted(train_ids) for e in model.epochs),
          "fit: every epoch reads each training record once")
    check(len({tuple(e) for e in model.epochs}) == 3 and model.epochs[0] != train_ids,
          "fit: the three epochs' orders differ from each other and from the index order")
    check(model.eval_ids == val_ids * 3, "fit: evaluation reads the val samples in their order")
    say("figures: ours, batch 2, CPU: " + ours_steps)
    orders_ours = [tuple(e) for e in model.epochs]
    say("checkpoints of ours carry the %d tensors of the DVAE and the mel extractors" % len(model.dropped_state))
    weights = {k: v.clone() for k, v in model.state_dict().items()}

    # ---- Trainer's samples: a filtered list, small_run, eval samples of the train split ---
    out = os.path.join(WORK, "runs", "small")
    chosen = [s for s in train if s["cache_index"] % 2 == 0]
    model = Ours(config(out, 1), CACHE)
    t = trainer(TrainerArgs(small_run=4), model.config, model, chosen, train[:3], out)
    t.fit()
    check(len(model.losses) == 2 and sorted(model.epochs[0]) == sorted(ids[s["cache_index"]] for s in chosen[:4]),
          "small_run=4 on a filtered list: 2 steps over its first 4 records")
    check(model.eval_ids == train_ids[:3], "eval samples chosen from the train split are evaluated, in order")

    # ---- continue_path: a new model and config go on with run_ours ----------------------
    cont = os.path.join(WORK, "runs", "ours-continued")
    shutil.copytree(run_ours, cont)
    ckpt = latest_checkpoint(cont)
    cfg = config(os.path.join(WORK, "runs"), 3)
    model = Ours(cfg, CACHE)
    t = trainer(TrainerArgs(continue_path=cont), cfg, model, train, val, None)
    say("continue_path: config.model_args is now %s" % type(cfg.model_args).__name__)
    restored(t, model, ckpt, "continue_path (ours)")
    t.config.epochs = getattr(t, "epochs_done", 0) + 1        # coqui-ai/Trainer counts epochs from 0 again
    t.fit()
    check(len(model.epochs) == 1 and all(math.isfinite(x) for x in model.losses) and len(model.losses) == per,
          "continue_path: an epoch more, its losses finite")
    check(tuple(model.epochs[0]) not in orders_ours, "continue_path: the continued epoch has an order of its own")

    # ---- Coqui's inference model loads the checkpoint as it loads GPTTrainer's --------------
    from TTS.tts.layers.xtts.tokenizer import VoiceBpeTokenizer
    from TTS.tts.models.xtts import Xtts
    xtts = Xtts(config(os.path.join(WORK, "runs"), 1))
    xtts.tokenizer = VoiceBpeTokenizer(os.path.join(WORK, "vocab.json"))
    xtts.init_models()
    xtts.load_state_dict(xtts.get_compatible_checkpoint_state_dict(latest_checkpoint(run_ours)), strict=True)
    say("ok: Xtts (inference) loads the checkpoint strictly, as Xtts.load_checkpoint reads it")

    # ---- Coqui's GPTTrainer on its own data path ----------------------------------------
    data = os.path.join(WORK, "data")
    everything, _ = load_tts_samples([BaseDatasetConfig(formatter="ljspeech", dataset_name="test", path=data,
                                                        meta_file_train="metadata.csv", language="en")],
                                     eval_split=False)
    by_id = {os.path.splitext(os.path.basename(s["audio_file"]))[0]: s for s in everything}
    theirs_train, theirs_val = [by_id[i] for i in train_ids], [by_id[i] for i in val_ids]
    out = os.path.join(WORK, "runs", "theirs")
    theirs = Theirs(config(out, 1))
    t = trainer(TrainerArgs(), theirs.config, theirs, theirs_train, theirs_val, out)
    t.fit()
    run_theirs = t.output_path
    check(all(math.isfinite(x) for x in theirs.losses) and len(theirs.losses) == per,
          "Coqui's GPTTrainer: an epoch on its own data path, losses finite")
    say("figures: Coqui's GPTTrainer, batch 2, CPU: " + step_figures(t, theirs))

    # ---- cross-class: ours -> GPTTrainer, GPTTrainer -> ours ----------------------------
    for name, run, cls in (("ours -> GPTTrainer", run_ours, GPTTrainer), ("GPTTrainer -> ours", run_theirs, Ours)):
        cont = os.path.join(WORK, "runs", name.replace(" ", "").replace(">", ""))
        shutil.copytree(run, cont)
        ckpt = latest_checkpoint(cont)
        kept = shutil.copy(ckpt, cont + ".pth")     # Trainer deletes the older best model when it saves one
        cfg = config(os.path.join(WORK, "runs"), 1)
        m = cls(cfg, CACHE) if cls is Ours else cls(cfg)
        t = trainer(TrainerArgs(continue_path=cont), cfg, m, train if cls is Ours else theirs_train,
                    val if cls is Ours else theirs_val, None)
        restored(t, m, ckpt, "continue_path " + name)
        if cls is Ours:
            t.config.epochs = getattr(t, "epochs_done", 0) + 1
            t.fit()
            check(len(m.losses) == per and all(math.isfinite(x) for x in m.losses),
                  "ours goes on with GPTTrainer's run for an epoch, losses finite")
        if FLAVOUR == "coqui-ai":                  # there restore_path restores the optimizer too
            cfg = config(os.path.join(WORK, "runs"), 1)
            m = cls(cfg, CACHE) if cls is Ours else cls(cfg)
            t = trainer(TrainerArgs(restore_path=kept), cfg, m, None, None, os.path.join(WORK, "runs"))
            restored(t, m, kept, "restore_path " + name)

    # ---- per-clip eval losses with the same weights -------------------------------------
    cfg = config(os.path.join(WORK, "runs"), 1)
    cfg.eval_batch_size = 1
    ours, theirs = CachedGPTTrainer(cfg, CACHE), GPTTrainer(config(os.path.join(WORK, "runs"), 1))
    ours.load_state_dict(weights)
    theirs.load_state_dict(weights)                 # strict: ours carries the DVAE and the mel extractors
    ours.eval()
    theirs.eval()
    losses, codes = {}, {}
    with torch.no_grad():
        for b in ours.get_data_loader(cfg, None, True, val + train, False, 1):
            rid = b["filenames"][0]
            b = ours.format_batch_on_device(ours.format_batch(b))
            codes[rid] = b["audio_codes"][0, :math.ceil(int(b["wav_lengths"][0]) / 1024)]
            losses[rid] = ours.eval_step(b, None)[1]
        compared, n_codes, gaps, worst = [], 0, [], 0.0
        for b in theirs.get_data_loader(cfg, None, True, theirs_val + theirs_train, False, 1):
            rid = os.path.splitext(os.path.basename(b["filenames"][0]))[0]
            wav = b["wav"]
            b = theirs.format_batch_on_device(theirs.format_batch(b))
            c = b["audio_codes"][0, :math.ceil(int(b["wav_lengths"][0]) / 1024)]
            n_codes += c.numel()
            differ = (c != codes[rid]).nonzero().flatten()
            if len(differ):
                gaps += near_tie_gaps(theirs, wav, differ, codes[rid], c)
                continue
            got = theirs.eval_step(b, None)[1]
            for k in ("loss_text_ce", "loss_mel_ce"):
                worst = max(worst, abs(float(got[k]) - float(losses[rid][k])) / abs(float(got[k])))
            compared.append(rid)
    say("same weights: %d of %d codes differ, in %d clips, each a near-tie of the DVAE's distances (largest "
        "gap %.1e of the latent's squared norm); the other %d clips' losses: largest relative difference %.2e"
        % (len(gaps), n_codes, len(codes) - len(compared), max(gaps, default=0.0), len(compared), worst))
    check(len(codes) == len(cache) and len(gaps) <= n_codes // 200 and max(gaps, default=0.0) < 1e-5,
          "our cached codes are Coqui's DVAE's but for near-ties")
    check(len(compared) >= len(cache) - 5 and worst < 1e-5,
          "the eval losses of the %d clips with the same codes equal GPTTrainer's on the same weights (relative "
          "1e-5)" % len(compared))


def near_tie_gaps(theirs, wav, positions, ours, coquis):
    """For each differing code: how far apart the DVAE's squared distances from the latent to our
    entry and to Coqui's are, over the latent's squared norm (float32 rounds at about 1e-7 of it)."""
    dvae = theirs.dvae
    latent = dvae.encoder(dvae.norm(theirs.torch_mel_spectrogram_dvae(wav)))[0].T          # [T, dim]
    embed = dvae.codebook.embed                                                           # [dim, n]
    x = latent[positions].double()
    dist = x.pow(2).sum(1, keepdim=True) - 2 * x @ embed.double() + embed.double().pow(2).sum(0, keepdim=True)
    k = torch.arange(len(positions))
    return [float(g) for g in ((dist[k, ours[positions]] - dist[k, coquis[positions]]).abs() / x.pow(2).sum(1))]

if __name__ == "__main__":
    main()
