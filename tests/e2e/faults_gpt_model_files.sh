#!/usr/bin/env bash
# Hostile and damaged model files of xtts-train --model xtts-gpt: a config.json that is damaged,
# of absurd sizes (gpt_layers 100000, negative heads, channels not a multiple of the heads,
# lengths the loader would allocate by), null text tokens without a vocab.json, a vocab.json of
# ids that are not integers; an --init that runs code under torch.load (os.system), is
# truncated or empty, lacks a tensor, has one of another shape, or holds a tensor that model.pth
# cannot carry (refused before the steps, not after them); a --ckpt that cannot be made. Each:
# exit 2, one line naming the file and the key or field, nothing run, no file written. The
# config and hostile-pickle cases need no torch (a cache without codes: they stop before the
# loader); the shape and key cases write their files with torch, and skip without it.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
source "$(dirname "$0")/xtts_gpt_lib.bash"

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/plain" --audio int16 -j 2 -q "$T/tokens.tsv"
cat > "$T/config.json" <<'EOF'
{"model_args": {"gpt_layers": 1, "gpt_n_model_channels": 16, "gpt_n_heads": 2, "gpt_number_text_tokens": 288,
 "gpt_start_text_token": 1, "gpt_stop_text_token": 2, "gpt_num_audio_tokens": 32, "gpt_start_audio_token": 30,
 "gpt_stop_audio_token": 31, "gpt_use_perceiver_resampler": true, "tokenizer_file": "",
 "min_conditioning_length": 11025, "max_conditioning_length": 22050}, "lr": 1e-3}
EOF
G=(--model xtts-gpt --cache "$T/plain" --batch-size 2 -j 2 --steps 1)

# config.json: each damage one line naming the file and the field, exit 2 (not a usage error)
"$PY" - "$T" <<'EOF'
import json, os, sys
T = sys.argv[1]
base = json.load(open(f"{T}/config.json"))
def mk(name, edit, text=None):
    os.makedirs(os.path.dirname(f"{T}/cf/{name}"), exist_ok=True)
    if text is not None:
        open(f"{T}/cf/{name}", "w").write(text); return
    c = json.loads(json.dumps(base)); edit(c); json.dump(c, open(f"{T}/cf/{name}", "w"))
def ma(k, v): return lambda c: c["model_args"].__setitem__(k, v)
mk("layers.json", ma("gpt_layers", 100000))
mk("negheads.json", ma("gpt_n_heads", -2))
mk("notdiv.json", ma("gpt_n_heads", 3))
mk("cond.json", ma("max_conditioning_length", -5))
mk("wav.json", ma("max_wav_length", 2000000000))
mk("condorder.json", ma("min_conditioning_length", 30000))
mk("strlayers.json", ma("gpt_layers", "many"))
mk("betas.json", lambda c: c.__setitem__("optimizer_params", {"betas": ["a", "b"]}))
mk("milestones.json", lambda c: c.__setitem__("lr_scheduler_params", {"milestones": ["a"]}))
mk("nomodelargs.json", lambda c: c.__setitem__("model_args", []))
mk("truncated.json", None, json.dumps(base)[:100])
mk("empty.json", None, "")
mk("nulltok/config.json", ma("gpt_start_text_token", None))
for d, vocab in (("vbig", '{"model": {"vocab": {"[START]": 0, "[STOP]": 1, "a": 99999999999}}}'),
                 ("vstr", '{"model": {"vocab": {"[START]": "x", "[STOP]": 1}}}')):
    mk(f"{d}/config.json", ma("gpt_start_text_token", None))
    open(f"{T}/cf/{d}/vocab.json", "w").write(vocab)
EOF
check() { # FILE FIELD: exit 2, one line naming FILE and FIELD
  expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$1"
  one_line_error "^xtts-train: $1: .*$2"
}
check "$T/cf/layers.json" "gpt_layers = 100000 is out of"
check "$T/cf/negheads.json" "gpt_n_heads = -2 is out of"
check "$T/cf/notdiv.json" "gpt_n_model_channels 16 is not a multiple of gpt_n_heads 3"
check "$T/cf/cond.json" "max_conditioning_length = -5 is out of"
check "$T/cf/wav.json" "max_wav_length = 2000000000 is out of"
check "$T/cf/condorder.json" "min_conditioning_length 30000 is above max_conditioning_length"
check "$T/cf/strlayers.json" "gpt_layers: expected an integer"
check "$T/cf/betas.json" "optimizer_params.betas"
check "$T/cf/milestones.json" "milestones\[0\]"
check "$T/cf/nomodelargs.json" "no model_args object"
check "$T/cf/truncated.json" "line 1"
check "$T/cf/empty.json" "line 1"
check "$T/cf/nulltok" "a directory, not a file"
check "$T/cf/nulltok/config.json" "gpt_start_text_token or gpt_stop_text_token is null and there is no .*vocab.json"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$T/cf/vbig/config.json"
one_line_error "^xtts-train: $T/cf/vbig/vocab.json: model.vocab: token id of \"a\" is not an integer"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$T/cf/vstr/config.json"
one_line_error "^xtts-train: $T/cf/vstr/vocab.json: model.vocab: token id of \"\[START\]\""

# --init files that would run code, or are cut short: refused by the reader, nothing run
"$PY" - "$T" <<'EOF'
import os, pickle, sys, zipfile
T = sys.argv[1]
class System:
    def __reduce__(self): return (os.system, (f"touch {T}/pwned",))
with zipfile.ZipFile(f"{T}/system.pth", "w") as z:
    z.writestr("archive/data.pkl", pickle.dumps({"model": {"gpt.text_embedding.weight": System()}}, protocol=2))
    z.writestr("archive/data/0", bytes(24))
data = open(f"{T}/system.pth", "rb").read()
open(f"{T}/truncated.pth", "wb").write(data[: len(data) // 2])
open(f"{T}/empty.pth", "wb").close()
EOF
for f in system truncated empty; do
  expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$T/config.json" --init "$T/$f.pth" --ckpt "$T/out_$f"
  one_line_error "^xtts-train: $T/$f.pth: "
  [ ! -e "$T/out_$f/model.pth" ] || die "$f.pth: model.pth written"
done
[ ! -e "$T/pwned" ] || die "the pickle's os.system ran"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$T/config.json" --init "$T/system.pth"
one_line_error "^xtts-train: $T/system.pth: data.pkl offset [0-9]+: global posix.system not allowed"

# a --ckpt that cannot be made: refused before the first step
touch "$T/afile"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --config "$T/config.json" --ckpt "$T/afile/x"
one_line_error "^xtts-train: $T/afile/x: "
grep -q "^xtts-train: step" "$T/err.txt" && die "steps run before the --ckpt was refused"

# shapes, keys and dtypes: files written by torch from a model.pth of this config
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "skip: $PY lacks torch: the shape, key and dtype cases"
  exit 0
fi
gpt_cache
G=(--model xtts-gpt --config "$T/config.json" --cache "$T/c" --batch-size 2 -j 2 --steps 1)
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --ckpt "$T/ck"
"$PY" - "$T" <<'EOF'
import sys, torch
T = sys.argv[1]
sd = torch.load(f"{T}/ck/model.pth", weights_only=True)["model"]
k = "gpt.text_embedding.weight"
def save(name, edit):
    d = dict(sd); edit(d); torch.save({"model": d}, f"{T}/{name}.pth")
save("shape", lambda d: d.__setitem__(k, torch.zeros(5, 16)))
save("missing", lambda d: d.pop("gpt.mel_head.weight"))
save("extra_bool", lambda d: d.__setitem__("gpt.extra.weight", torch.zeros(3, dtype=torch.bool)))
save("complex", lambda d: d.__setitem__(k, torch.complex(sd[k], sd[k])))
EOF
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --init "$T/shape.pth"
one_line_error "^xtts-train: $T/shape.pth: key 'model.gpt.text_embedding.weight' has shape \(5, 16\), \(288, 16\) expected"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --init "$T/missing.pth"
one_line_error "^xtts-train: $T/missing.pth: key 'model.gpt.mel_head.weight' missing"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --init "$T/complex.pth"
one_line_error "^xtts-train: $T/complex.pth: .*ComplexFloatStorage not allowed"
# a tensor model.pth cannot carry: refused before the steps, the last model.pth kept
cp "$T/ck/model.pth" "$T/before.pth"
expect_rc 2 "$BIN/xtts-train" "${G[@]}" --init "$T/extra_bool.pth" --ckpt "$T/ck"
one_line_error "^xtts-train: $T/extra_bool.pth: tensor model.gpt.extra.weight: bool is not carried"
grep -q "^xtts-train: step" "$T/err.txt" && die "steps run before extra_bool.pth was refused"
cmp -s "$T/ck/model.pth" "$T/before.pth" || die "model.pth changed"
echo "ok"
