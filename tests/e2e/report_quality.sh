#!/usr/bin/env bash
# xtts-cache-report end to end: the demo dataset plus clips made faulty on purpose (a copy of
# another clip's audio, a clip too short to measure, a long silence first, a clipped one) go
# through xtts-tokenize and xtts-melcache, which stores every record's quality metrics; the
# report's summary, TSV and JSON name those flags (never a NaN); the TSV fed back to
# --exclude of both programs leaves the flagged records out; xtts-cache-verify and the report
# name a record whose metrics were damaged or removed; a cache without metrics says how to
# add them; a bad thresholds file is a usage error naming its line.
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"; PY=${PYTHON:-/usr/bin/python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
die() { echo "FAIL: $*"; exit 1; }
bash "$here/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1

# the faulty clips, made from en_001.wav (16-bit PCM)
"$PY" - "$T/data" <<'EOF'
import sys, wave, numpy as np
d = sys.argv[1]
with wave.open(f"{d}/wavs/en_001.wav") as w:
    rate, ch = w.getframerate(), w.getnchannels()
    x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, ch)[:, 0].astype(np.float64)
def put(name, y):
    with wave.open(f"{d}/wavs/{name}.wav", "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(rate)
        w.writeframes(np.clip(np.round(y), -32768, 32767).astype("<i2").tobytes())
put("qa_dup", x)                                              # the same samples as en_001
put("qa_short", 8000 * np.sin(np.arange(int(0.06 * rate)) * 0.2))  # 60 ms
put("qa_lead", np.concatenate([np.zeros(int(2.5 * rate)), x]))    # 2.5 s of silence first
put("qa_clip", np.clip(x * 12, -32767, 32767))                 # driven hard into full scale
with open(f"{d}/metadata.csv", "a") as m:
    m.write("qa_dup|A copy of the first clip's audio.|A copy of the first clip's audio.\n")
    m.write("qa_short|Short.|Short.\n")
    m.write("qa_lead|A long silence before the words.|A long silence before the words.\n")
    m.write("qa_clip|The same words, far too loud.|The same words, far too loud.\n")
EOF

rc=0; "$BIN/xtts-tokenize" --lang en "$T/data/metadata.csv" > "$T/tokens.tsv" 2>"$T/tok.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/tok.err"; die "tokenize exit $rc"; }
rc=0; "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --audio int16 "$T/tokens.tsv" 2>"$T/mel.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/mel.err"; die "melcache exit $rc"; }
"$BIN/xtts-cache-verify" "$T/c" > "$T/verify.out" || { cat "$T/verify.out"; die "verify of a fresh cache"; }
n=$("$PY" -c "import json,sys;print(json.load(open(sys.argv[1]))['records'])" "$T/c/manifest.json")

# summary, TSV, JSON
"$BIN/xtts-cache-report" "$T/c" --tsv "$T/r.tsv" --json "$T/r.json" > "$T/summary.txt" || die "report exit $?"
grep -q "^records: $n " "$T/summary.txt" || { cat "$T/summary.txt"; die "summary: records"; }
grep -q "^kept if the flagged records are dropped: " "$T/summary.txt" || die "summary: kept"
for f in dup_audio too_short lead_silence clipped upsampled; do
  grep -Eq "^$f +[1-9]" "$T/summary.txt" || { cat "$T/summary.txt"; die "summary: no record flagged $f"; }
done
grep -q "^default " "$T/summary.txt" || die "summary: no speaker line"
head -1 "$T/r.tsv" | grep -q "^id	flags	dup_of	speaker	status	duration_s	" || die "TSV header"
[ "$(tail -n +2 "$T/r.tsv" | wc -l)" -eq "$n" ] || die "TSV: not one line per record"
if grep -qi "nan\|inf" <(tail -n +2 "$T/r.tsv" | cut -f5-); then die "TSV holds NaN or Inf"; fi
line() { awk -F'\t' -v id="$1" '$1 == id' "$T/r.tsv"; }
grep -q . <<< "$(line qa_dup | awk -F'\t' '$2 ~ /(^|,)dup_audio(,|$)/ && $3 == "en_001"')" || die "qa_dup: $(line qa_dup | cut -f1-5)"
grep -q . <<< "$(line qa_short | awk -F'\t' '$2 ~ /too_short/ && $5 == "too_short"')" || die "qa_short: $(line qa_short | cut -f1-5)"
grep -q . <<< "$(line qa_lead | awk -F'\t' '$2 ~ /lead_silence/ && $7 > 2.0')" || die "qa_lead: $(line qa_lead | cut -f1-8)"
grep -q clipped <<< "$(line qa_clip | cut -f2)" || die "qa_clip: $(line qa_clip | cut -f1-5)"
grep -qv dup_audio <<< "$(line en_001 | cut -f2)" || die "en_001: the first of two copies is not flagged"
"$PY" - "$T/r.json" "$T/r.tsv" "$n" <<'EOF'
import json, math, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
assert j["records"] == n and len(j["per_record"]) == n, (j["records"], len(j["per_record"]))
rows = {l.split("\t")[0]: l.rstrip("\n").split("\t") for l in open(sys.argv[2]).readlines()[1:]}
for r in j["per_record"]:
    flags = ",".join(r["flags"]) or "-"
    assert rows[r["id"]][1] == flags, (r["id"], flags, rows[r["id"]][1])
    for k, v in r.items():
        assert not (isinstance(v, float) and not math.isfinite(v)), (r["id"], k)
short = next(r for r in j["per_record"] if r["id"] == "qa_short")
assert short["status"] == "too_short" and short["snr_db"] is None and short["duration_s"] > 0, short
dup = next(r for r in j["per_record"] if r["id"] == "qa_dup")
assert dup["dup_of"] == "en_001", dup
assert j["flagged_records"] == sum(1 for r in j["per_record"] if r["flags"])
assert abs(j["kept_hours"] + j["flagged_hours"] - j["hours"]) < 1e-9
EOF
# the Python package reads the same metrics and flags, both backends, and filters on them
printf 'snr_db = 60\n' > "$T/strict.conf"
"$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/strict.conf" --tsv "$T/r60.tsv" || die "report --thresholds"
# (the C backend only where the library is a plain build: a sanitizer build's cannot be loaded
# into an uninstrumented interpreter)
# (the package and the tests' oracle, python/tests/xtts_oracle; none where the library is a
# sanitizer build, which cannot load into an uninstrumented interpreter: the package does not import)
backends=c,python; pylib=$BUILD/lib
if grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so" 2>/dev/null)"; then
  echo "skip: a sanitizer build's libxtts-reader.so: python's metrics and flags not checked"
else
PYTHONPATH="$here/python:$here/python/tests" XTTS_PREP_LIB="$pylib" "$PY" - "$T/c" "$T/r.tsv" "$T/r60.tsv" "$backends" <<'EOF' || die "python's metrics or flags differ from the report's"
import sys
BACKENDS = sys.argv[4].split(",")
import xtts_oracle
import xtts_prep.data
from xtts_prep import CacheDataset
def rows(path):
    lines = open(path).read().splitlines()
    head = lines[0].split("\t")
    return {l.split("\t")[0]: dict(zip(head, l.split("\t"))) for l in lines[1:]}
def close(v, text):
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(v - float(text)) <= 0.5 * 10 ** -decimals + 1e-9
want, want60 = rows(sys.argv[2]), rows(sys.argv[3])
for backend in BACKENDS:
    c = xtts_oracle.cache(sys.argv[1], backend)
    assert c.backend == backend and c.has_metrics()
    flags, dup_of = c.quality_flags()
    for i in range(len(c)):
        rid = c.header(i)["id"]
        w, m = want[rid], c.metrics(i)
        assert (",".join(c.flags(i)) or "-") == w["flags"], (backend, rid, c.flags(i), w["flags"])
        assert (c.header(int(dup_of[i]))["id"] if dup_of[i] >= 0 else "-") == w["dup_of"], (backend, rid)
        assert m["status"] == w["status"] and m["audio_hash"] == w["audio_hash"], (backend, rid)
        for k in ("duration_s", "snr_db", "active_dbfs", "start_edge_db", "bandwidth_hz", "clip_fraction"):
            assert close(m[k], w[k]), (backend, rid, k, m[k], w[k])
        assert (",".join(c.flags(i, {"snr_db": 60})) or "-") == want60[rid]["flags"], (backend, rid)
    # the package's dataset over either reader
    xtts_prep.data.XttsCache = type(c)
    ds = CacheDataset(sys.argv[1], exclude_flags=["dup_audio", "clipped", "lead_silence"])
    kept = {ds[k]["id"] for k in range(len(ds))}
    gone = {r for r, w in want.items() if set(w["flags"].split(",")) & {"dup_audio", "clipped", "lead_silence"}}
    assert gone and kept == set(want) - gone, (backend, sorted(gone), len(kept))
print("python reads the report's metrics and flags: ok")
EOF
fi
# a build in parts, joined: the same metrics, so the same report
for k in 0 1 2; do
  rc=0; "$BIN/xtts-melcache" --out "$T/cp" --part $k/3 -j 1 -q --audio int16 "$T/tokens.tsv" 2>/dev/null || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "part $k: exit $rc"
done
"$BIN/xtts-cache-verify" "$T/cp" > /dev/null || die "verify of the parts"
"$BIN/xtts-cache-report" -q "$T/cp" --tsv "$T/rp.tsv" || die "report of the parts"
cmp -s "$T/r.tsv" "$T/rp.tsv" || { diff "$T/r.tsv" "$T/rp.tsv" | head -5; die "the parts' report differs from the whole build's"; }
# the report to stdout
"$BIN/xtts-cache-report" "$T/c" --tsv - | cmp -s - "$T/r.tsv" || die "--tsv - differs from the file"

# back into the build: the flagged records are left out, counted as excluded
flagged=$(tail -n +2 "$T/r.tsv" | awk -F'\t' '$2 != "-"' | wc -l)
[ "$flagged" -gt 0 ] || die "no flagged record"
rc=0; "$BIN/xtts-tokenize" --lang en --exclude "$T/r.tsv" "$T/data/metadata.csv" > "$T/tokens-x.tsv" 2>"$T/tokx.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/tokx.err"; die "tokenize --exclude exit $rc"; }
grep -q ", $flagged excluded" "$T/tokx.err" || { cat "$T/tokx.err"; die "tokenize: want $flagged excluded"; }
if grep -qx "qa_dup\|qa_lead\|qa_clip" <<< "$(cut -f1 "$T/tokens-x.tsv")"; then die "tokenize kept an excluded record"; fi
grep -qx en_001 <<< "$(cut -f1 "$T/tokens-x.tsv")" || die "tokenize dropped en_001"
rc=0; "$BIN/xtts-melcache" --out "$T/cx1" -j 2 -q "$T/tokens-x.tsv" 2>/dev/null || rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]
rc=0; "$BIN/xtts-melcache" --out "$T/cx2" -j 2 -q --exclude "$T/r.tsv" "$T/tokens.tsv" 2>"$T/melx.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/melx.err"; die "melcache --exclude exit $rc"; }
grep -q " $flagged excluded" "$T/melx.err" || { cat "$T/melx.err"; die "melcache: want $flagged excluded"; }
nx=$("$PY" -c "import json,sys;print(json.load(open(sys.argv[1]))['records'])" "$T/cx2/manifest.json")
[ "$nx" -eq $((n - flagged)) ] || die "melcache --exclude stored $nx records, want $((n - flagged))"
d1=$("$BIN/xtts-cache-verify" "$T/cx1" | sed -n 's/^digest: //p'); d2=$("$BIN/xtts-cache-verify" "$T/cx2" | sed -n 's/^digest: //p')
[ -n "$d1" ] && [ "$d1" = "$d2" ] || die "excluding in tokenize and in melcache give different caches"
# only some flags count; a plain list of ids; an unknown flag is a usage error
rc=0; "$BIN/xtts-tokenize" --lang en --exclude "$T/r.tsv" --exclude-flags clipped,dup_audio "$T/data/metadata.csv" \
  > "$T/tokens-c.tsv" 2>"$T/tokc.err" || rc=$?
want=$(tail -n +2 "$T/r.tsv" | awk -F'\t' '$2 ~ /(^|,)(clipped|dup_audio)(,|$)/' | wc -l)
grep -q ", $want excluded" "$T/tokc.err" || { cat "$T/tokc.err"; die "--exclude-flags: want $want excluded"; }
grep -qx qa_lead <<< "$(cut -f1 "$T/tokens-c.tsv")" || die "--exclude-flags clipped,dup_audio left out qa_lead"
printf 'en_001\nqa_lead\n\n' > "$T/ids.txt"
rc=0; "$BIN/xtts-tokenize" --lang en --exclude "$T/ids.txt" "$T/data/metadata.csv" > /dev/null 2>"$T/toki.err" || rc=$?
grep -q ", 2 excluded" "$T/toki.err" || { cat "$T/toki.err"; die "plain id list"; }
rc=0; "$BIN/xtts-tokenize" --exclude "$T/r.tsv" --exclude-flags clipped,bogus "$T/data/metadata.csv" >/dev/null 2>"$T/e.err" || rc=$?
[ $rc -eq 1 ] && grep -q "bogus" "$T/e.err" || die "unknown flag: exit $rc $(cat "$T/e.err")"
rc=0; "$BIN/xtts-melcache" --out "$T/cz" --exclude-flags nope "$T/tokens.tsv" 2>"$T/e.err" || rc=$?
[ $rc -eq 1 ] || die "melcache unknown flag: exit $rc"
rc=0; "$BIN/xtts-melcache" --out "$T/cz" --exclude "$T/missing.tsv" "$T/tokens.tsv" 2>"$T/e.err" || rc=$?
[ $rc -eq 2 ] && grep -q "missing.tsv" "$T/e.err" || die "missing exclude file: exit $rc"

# with --trim-db the signal measured is the trimmed one: qa_lead's 2.5 s of silence are gone
{ head -1 "$T/tokens.tsv"; awk -F'\t' '$1 == "qa_lead"' "$T/tokens.tsv"; } > "$T/tokens-lead.tsv"
"$BIN/xtts-melcache" --out "$T/ct" -q --trim-db 40 "$T/tokens-lead.tsv" 2>/dev/null || die "melcache --trim-db"
lead=$("$BIN/xtts-cache-report" "$T/ct" --tsv - | awk -F'\t' 'NR == 2 {print $7}')
awk -v l="$lead" 'BEGIN {exit !(l < 0.5)}' || die "--trim-db: qa_lead's leading silence measured as $lead s"

# thresholds: a file that moves one changes the flags; a bad line is a usage error naming it
printf '# stricter\ntoo_quiet_dbfs = 0\n' > "$T/th.txt"
"$BIN/xtts-cache-report" "$T/c" --thresholds "$T/th.txt" --tsv "$T/r2.tsv" > /dev/null
measured=$(tail -n +2 "$T/r2.tsv" | awk -F'\t' '$5 == "measured"' | wc -l)
[ "$(tail -n +2 "$T/r2.tsv" | awk -F'\t' '$2 ~ /too_quiet/' | wc -l)" -eq "$measured" ] || die "too_quiet_dbfs = 0 flags every measured record"
printf 'snr_db = 15\nloudness = 3\n' > "$T/bad.txt"
rc=0; "$BIN/xtts-cache-report" "$T/c" --thresholds "$T/bad.txt" > /dev/null 2>"$T/e.err" || rc=$?
[ $rc -eq 1 ] && grep -q "bad.txt:2" "$T/e.err" || die "bad thresholds: exit $rc $(cat "$T/e.err")"

# damaged metrics: one byte of qa_lead's entry; then en_002's entry removed
cp -r "$T/c" "$T/cd"
"$PY" - "$T/cd/shard-00000" qa_lead en_002 <<'EOF'
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=8, lock=False)
ids, q = env.open_db(b"ids"), env.open_db(b"quality")
with env.begin(write=True) as t:
    k = t.get(sys.argv[2].encode(), db=ids)
    v = bytearray(t.get(k, db=q)); v[20] ^= 0x40
    t.put(k, bytes(v), db=q)
    t.delete(t.get(sys.argv[3].encode(), db=ids), db=q)
EOF
rc=0; "$BIN/xtts-cache-verify" "$T/cd" > "$T/vd.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat "$T/vd.out"; die "verify of damaged metrics: exit $rc"; }
grep -q "id 'qa_lead'.*quality metrics damaged" "$T/vd.out" || { cat "$T/vd.out"; die "verify does not name qa_lead"; }
grep -q "id 'en_002'.*quality metrics missing" "$T/vd.out" || { cat "$T/vd.out"; die "verify does not name en_002"; }
grep -q "^records: $n in manifest, $n decoded, $((n - 2)) without fault" "$T/vd.out" || { cat "$T/vd.out"; die "verify counts the two records as sound"; }
rc=0; "$BIN/xtts-cache-report" "$T/cd" > /dev/null 2>"$T/rd.err" || rc=$?
[ $rc -eq 2 ] && grep -q "en_002\|qa_lead" "$T/rd.err" || die "report on damaged metrics: exit $rc $(cat "$T/rd.err")"

# a cache built before the metrics: verify passes, the report says how to add them
cp -r "$T/c" "$T/co"
"$PY" - "$T/co/shard-00000" <<'EOF'
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=8, lock=False)
with env.begin(write=True) as t:
    t.drop(env.open_db(b"quality", txn=t), delete=True)
EOF
"$BIN/xtts-cache-verify" "$T/co" > /dev/null || die "verify of a cache without metrics"
rc=0; "$BIN/xtts-cache-report" "$T/co" > /dev/null 2>"$T/ro.err" || rc=$?
[ $rc -eq 2 ] && grep -q "no quality metrics.*--force" "$T/ro.err" || die "report without metrics: exit $rc $(cat "$T/ro.err")"

# a build of such a cache resumed by this version goes on without metrics: never some of them
head -21 "$T/tokens.tsv" > "$T/tokens-20.tsv"
"$BIN/xtts-melcache" --out "$T/cr" -q "$T/tokens-20.tsv" 2>/dev/null || die "melcache of 20 records"
"$PY" - "$T/cr/shard-00000" <<'EOF2'
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=8, lock=False)
with env.begin(write=True) as t:
    t.drop(env.open_db(b"quality", txn=t), delete=True)
    t.delete(b"state:melcache-quality", db=env.open_db(b"meta", txn=t))
EOF2
rc=0; "$BIN/xtts-melcache" --out "$T/cr" -q "$T/tokens.tsv" 2>"$T/cr.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/cr.err"; die "resume exit $rc"; }
grep -q "carry no quality metrics" "$T/cr.err" || { cat "$T/cr.err"; die "the resume does not say it adds no metrics"; }
"$BIN/xtts-cache-verify" "$T/cr" > /dev/null || die "verify of the resumed cache"
rc=0; "$BIN/xtts-cache-report" "$T/cr" > /dev/null 2>&1 || rc=$?; [ $rc -eq 2 ] || die "resumed old cache: report exit $rc"
rc=0; "$BIN/xtts-melcache" --out "$T/cr" -q --force "$T/tokens.tsv" 2>/dev/null || rc=$?
"$BIN/xtts-cache-report" -q "$T/cr" || die "--force did not add the metrics"

# usage
rc=0; "$BIN/xtts-cache-report" > /dev/null 2>&1 || rc=$?; [ $rc -eq 1 ] || die "no DIR: exit $rc"
rc=0; "$BIN/xtts-cache-report" "$T/c" --tsv - --json - > /dev/null 2>&1 || rc=$?; [ $rc -eq 1 ] || die "two outputs on stdout: exit $rc"
rc=0; "$BIN/xtts-cache-report" "$T/nothing" > /dev/null 2>&1 || rc=$?; [ $rc -eq 2 ] || die "no cache: exit $rc"
echo "ok: $n records, $flagged flagged and excluded, damage and old caches named"
