#!/usr/bin/env bash
# Every metadata format (docs/datasets.md) on a small tree in its real layout
# (tests/make-format-trees.sh): --format auto recognises it and says so, the fields come out
# as the format defines them (ids, audio paths, speakers, languages, splits), its quirks are
# handled, and every tree goes end to end through xtts-melcache and xtts-cache-verify.
set -euo pipefail
BIN="$BUILD/bin"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
bash "$HERE/make-format-trees.sh" "$T/d" >/dev/null
D="$T/d"

# tokenize NAME INPUT [OPTIONS]: token stream NAME.tsv, stderr NAME.err; exit 0 or 3 wanted
tokenize() {
  local name=$1 input=$2; shift 2
  local rc=0
  "$BIN/xtts-tokenize" "$@" --rejects "$name.rej" "$input" > "$name.tsv" 2> "$name.err" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "$name: xtts-tokenize exit $rc: $(cat "$name.err")"
}
chose() { grep -q "reading as --format $2\$" "$1.err" || fail "$1: auto did not choose $2: $(cat "$1.err")"; }

tokenize ljs "$D/ljspeech/metadata.csv";                 chose ljs ljspeech
tokenize tsv "$D/tsv/list.tsv";                          chose tsv tsv
tokenize coqui "$D/coqui/metadata_train.csv";            chose coqui coqui
tokenize coqui_eval "$D/coqui/metadata_eval.csv";        chose coqui_eval coqui
tokenize vctk "$D/vctk/VCTK-Corpus-0.92";                chose vctk vctk
tokenize vctk2 "$D/vctk/VCTK-Corpus-0.92" --vctk-mic mic2
tokenize vctkold "$D/vctk-old/VCTK-Corpus";              chose vctkold vctk
tokenize libri "$D/libritts/LibriTTS";                   chose libri libritts
tokenize libri_orig "$D/libritts/LibriTTS" --text original
tokenize cv "$D/commonvoice/en/train.tsv";               chose cv commonvoice
tokenize cv_dev "$D/commonvoice/en/dev.tsv";             chose cv_dev commonvoice
tokenize mailabs "$D/mailabs";                           chose mailabs mailabs
tokenize nemo "$D/nemo/manifest.json";                   chose nemo nemo
tokenize cuts "$D/lhotse/cuts.jsonl.gz";                 chose cuts lhotse
tokenize sups "$D/lhotse/supervisions.jsonl.gz";         chose sups lhotse

grep -q "speaker p315 has audio in wav48_silence_trimmed/ but no transcripts: skipped" vctk.err || fail "p315 notice: $(cat vctk.err)"
grep -q "^p226_003	no audio file .*p226_003_mic1.flac" vctk.rej || fail "vctk missing audio: $(cat vctk.rej)"
grep -q "^r3-cut	a segment (start 0.100 s" cuts.rej || fail "lhotse segment: $(cat cuts.rej)"

"$PYTHON" - "$D" <<'PY'
import sys
D = sys.argv[1]
def rows(name):
    lines = open(name + ".tsv", encoding="utf-8").read().split("\n")
    head = dict(kv.split("=", 1) for kv in lines[0].split("\t")[1:])
    out = []
    for l in lines[1:]:
        if not l: continue
        f = l.split("\t")
        assert len(f) == (7 if head.get("fields") == "split" else 6), (name, f)
        out.append({"id": f[0], "spk": f[1], "lang": f[2], "audio": f[3], "text": f[5],
                    "split": f[6] if len(f) == 7 else None})
    return head, out
def check(name, want, keys=("id", "spk", "lang", "audio", "split")):
    head, got = rows(name)
    g = [tuple(r[k] for k in keys) for r in got]
    assert g == want, (name, g, want)
    return head, got

check("ljs", [(f"LJ001-000{i}", "", "en", f"{D}/ljspeech/wavs/LJ001-000{i}.wav", None) for i in (1, 2, 3)])
_, got = rows("ljs")
assert got[1]["text"] == "in being comparatively modern. it cost five dollars.", got[1]["text"]
h, _ = check("tsv", [("t1", "anna", "en", f"{D}/tsv/audio/t1.wav", "train"),
                     ("t2", "bruno", "es", f"{D}/tsv/audio/t2.flac", "val"),
                     ("t3", "chiku", "sw", f"{D}/tsv/audio/t3.wav", "test")])
assert h["languages"] == "sw" and h["lang"] == "column", h
# the XTTS fine-tuning CSV: header read as names, speaker names with spaces, language column
_, got = check("coqui", [("HO-en-01", "en-gb plus m seven", "en", f"{D}/coqui/wavs/HO-en-01.wav", "train"),
                         ("HO-en-02", "en-gb plus m seven", "en", f"{D}/coqui/wavs/HO-en-02.wav", "train")])
assert got[0]["text"] == "the quick brown fox jumps over the lazy dog.", got[0]
check("coqui_eval", [("HO-de-01", "coqui", "de", f"{D}/coqui/wavs/HO-de-01.wav", "val")])
V = f"{D}/vctk/VCTK-Corpus-0.92/wav48_silence_trimmed"
check("vctk", [(u, u[:4], "en", f"{V}/{u[:4]}/{u}_mic1.flac", None) for u in ("p225_001", "p225_002", "p226_001")])
check("vctk2", [(u, u[:4], "en", f"{V}/{u[:4]}/{u}_mic2.flac", None) for u in ("p225_001", "p225_002", "p226_001")])
_, got = rows("vctk")
assert got[2]["text"] == "six spoons of fresh snow peas.", got[2]   # CRLF transcript
check("vctkold", [("p225_001", "p225", "en", f"{D}/vctk-old/VCTK-Corpus/wav48/p225/p225_001.wav", None)])
L = f"{D}/libritts/LibriTTS"
want = [("84_121123_000008_000000", "84", "en", f"{L}/dev-clean/84/121123/84_121123_000008_000000.wav", "val"),
        ("19_198_000000_000000", "19", "en", f"{L}/train-clean-100/19/198/19_198_000000_000000.wav", "train"),
        ("19_198_000000_000001", "19", "en", f"{L}/train-clean-100/19/198/19_198_000000_000001.wav", "train")]
_, got = check("libri", want)
assert got[2]["text"] == "it was eighteen oh three.", got[2]
_, got = check("libri_orig", want)
assert got[1]["text"] == 'this is chapter one of "northanger abbey."', got[1]   # 1 expanded by our normalizer
C = f"{D}/commonvoice/en/clips"
_, got = check("cv", [("common_voice_en_100", "a1b2c3", "en", f"{C}/common_voice_en_100.mp3", "train"),
                      ("common_voice_en_101", "a1b2c3", "en", f"{C}/common_voice_en_101.mp3", "train")])
assert got[1]["text"] == '"hello," she said.', got[1]   # CSV-quoted field unquoted
check("cv_dev", [("common_voice_en_102", "d4e5f6", "en", f"{C}/common_voice_en_102.mp3", "val")])
M = f"{D}/mailabs/uk_UK/by_book"
h, _ = check("mailabs", [("kazka_01_f000001", "sumska", "uk", f"{M}/female/sumska/kazka/wavs/kazka_01_f000001.wav", None),
                         ("kazka_01_f000002", "sumska", "uk", f"{M}/female/sumska/kazka/wavs/kazka_01_f000002.wav", None),
                         ("zbirka_01_f000001", "", "uk", f"{M}/mix/zbirka/wavs/zbirka_01_f000001.wav", None)])
assert h["languages"] == "uk", h
check("nemo", [("n1", "3", "en", f"{D}/nemo/wavs/n1.wav", None), ("n2", "4", "fr", f"{D}/nemo/wavs/n2.wav", None)])
check("cuts", [("r1-cut", "s1", "en", f"{D}/lhotse/wavs/r1.wav", None), ("r2-cut", "s2", "en", f"{D}/lhotse/wavs/r2.wav", None)])
check("sups", [("r1-sup", "s1", "en", f"{D}/lhotse/wavs/r1.wav", None), ("r2-sup", "s2", "en", f"{D}/lhotse/wavs/r2.wav", None)])
print("fields ok")
PY

# every tree end to end: melcache stores what tokenize wrote, verify passes
for name in ljs tsv coqui vctk vctkold libri cv mailabs nemo cuts sups; do
  rc=0; "$BIN/xtts-melcache" --out "c_$name" -q "$name.tsv" 2> "c_$name.err" || rc=$?
  [ $rc -eq 0 ] || fail "$name: xtts-melcache exit $rc: $(cat "c_$name.err")"
  "$BIN/xtts-cache-verify" "c_$name" > "v_$name.txt" || fail "$name: verify: $(cat "v_$name.txt")"
done
grep -q "1 records of the test split held out" c_tsv.err || fail "test split not held out: $(cat c_tsv.err)"
"$PYTHON" - <<'PY'
import json
def m(name): return json.load(open(f"c_{name}/manifest.json"))
x = m("tsv"); assert x["records"] == 2 and x["splits"] == {"train": 1, "val": 1}, x["splits"]
assert x["languages"][-1] == "sw" and len(x["languages"]) == 18, x["languages"]
x = m("mailabs"); assert x["languages"][17:] == ["uk"] and x["records"] == 3, x["languages"]
x = m("libri"); assert x["splits"] == {"train": 2, "val": 1}, x["splits"]
x = m("vctk"); assert x["records"] == 3 and x["languages"] == x["languages"][:17], x
print("caches ok")
PY
# the trainer reads a cache whose language table goes past XTTS's 17 (uk is id 17)
"$BIN/xtts-train" --cache c_mailabs --steps 2 --batch-size 2 > train.log 2>&1 || fail "train on uk: $(tail -3 train.log)"
echo "formats_all: ok"
