#!/usr/bin/env bash
# Fault injection: damaged inputs part way through the pipeline.
# 1. a record damaged in a shard (bytes flipped in data.mdb inside one record's zstd
#    frame, and in another's header), met by xtts-train: it stops (exit 2) with one line
#    naming the shard, index and id and pointing to xtts-cache-verify; with --skip-corrupt
#    it goes on and counts the records it skipped (a damaged header too, which used to stop
#    the run even with --skip-corrupt); verify lists the same records.
# 2. a truncated data.mdb: xtts-train stops with one line (--skip-corrupt cannot help).
# 3. a token stream whose last line is cut short (as when xtts-tokenize dies mid-write):
#    xtts-melcache refuses it naming the line, before touching the cache; a stream cut at
#    a line boundary builds what it holds, and the whole stream then resumes that build.
# 4. a token stream of another tokenizer (phonemes) or another --max-tokens used to
#    resume an interrupted build, or on a finished cache: refused (configuration), the
#    cache untouched; the right stream then completes it.
# 5. a fifo given as an audio path: rejected at once (it used to block open() forever).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/good" -j 2 -q "$T/tokens.tsv"
d_ref=$(digest "$T/good"); [ -n "$d_ref" ] || die "the cache does not verify"
tr=(--model tiny --width 32 --heads 2 --layers 1 --batch-size 4 --threads 2 --loader-threads 2 --log-every 100)
steps=16   # more than an epoch of the demo's 60 records: every record is met

# damage CACHE INDEX WHERE: flip 4 bytes of record INDEX of shard-00000 in data.mdb, at
# WHERE (header: byte 8 of the record; frame: the middle of the record); prints the id
damage() {
  "$PY" - "$@" <<'PYEOF'
import lmdb, sys
d, index, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
env = lmdb.open(d + "/shard-00000", readonly=True, lock=False, max_dbs=4)
with env.begin() as txn:
    val = bytes(txn.get(index.to_bytes(8, "big"), db=env.open_db(b"records", txn=txn, create=False)))
env.close()
path = d + "/shard-00000/data.mdb"
data = bytearray(open(path, "rb").read())
at = data.find(val[:256])
assert at >= 0 and data.find(val[:256], at + 1) < 0, "record not found once in data.mdb"
off = at + (8 if where == "header" else len(val) // 2)
for k in range(4):
    data[off + k] ^= 0xA5
with open(path, "r+b") as f:
    f.seek(off)
    f.write(data[off:off + 4])
# the id follows the 64-byte header; its length is the u16 at offset 12
n = int.from_bytes(val[12:14], "little")
print(val[64:64 + n].decode())
PYEOF
}

# 1. one damaged record
rm -rf "$T/bad"; cp -r "$T/good" "$T/bad"
id7=$(damage "$T/bad" 7 frame)
[ -n "$id7" ] || die "no id for record 7"
expect_rc 2 "$BIN/xtts-train" --cache "$T/bad" "${tr[@]}" --steps $steps
one_line_error "shard-00000: index 7, id '$id7': .*checksum mismatch; check the cache with xtts-cache-verify $T/bad, or pass --skip-corrupt"
expect_rc 0 "$BIN/xtts-train" --cache "$T/bad" "${tr[@]}" --steps $steps --skip-corrupt --log-json "$T/skip.json"
grep -q "warning: skipped 1 corrupt record(s) (1 so far): shard-00000: index 7, id '$id7'" "$T/err.txt" || { cat "$T/err.txt"; die "no skip warning"; }
grep -q '"skipped_records":1,' "$T/skip.json" || die "summary does not count the skipped record"
[ "$(grep -c '^{"step"' "$T/skip.json")" -eq $steps ] || die "--skip-corrupt did not run every step"
expect_rc 2 "$BIN/xtts-cache-verify" "$T/bad"
grep -q "^fault: shard-00000: index 7: id '$id7': zstd frame checksum mismatch" "$T/out.txt" || die "verify does not name record 7"
echo "ok: a damaged frame stops xtts-train at '$id7'; --skip-corrupt counts it"

# a second record damaged in its header: both are skipped and counted, both listed
id20=$(damage "$T/bad" 20 header)
# (headers are read when the run starts: it stops there, or leaves the record out)
expect_rc 2 "$BIN/xtts-train" --cache "$T/bad" "${tr[@]}" --steps $steps
one_line_error "shard-00000: index 20, id '$id20': record header checksum mismatch; check the cache with xtts-cache-verify $T/bad, or pass --skip-corrupt"
expect_rc 0 "$BIN/xtts-train" --cache "$T/bad" "${tr[@]}" --steps $steps --skip-corrupt --log-json "$T/skip2.json"
grep -q '"skipped_records":2,' "$T/skip2.json" || die "summary does not count 2 skipped records"
grep -q "warning: left out 1 record(s) with a corrupt header: shard-00000: index 20, id '$id20'" "$T/err.txt" || { cat "$T/err.txt"; die "no warning for the header"; }
expect_rc 2 "$BIN/xtts-cache-verify" "$T/bad"
grep -q "^fault: shard-00000: index 20: id '$id20'" "$T/out.txt" || die "verify does not name record 20"
grep -q "^faults: 2$" "$T/out.txt" || die "verify does not count 2 faults"
echo "ok: a damaged header ('$id20') too"

# 2. a truncated data.mdb
rm -rf "$T/trunc"; cp -r "$T/good" "$T/trunc"
truncate -s $(( $(stat -c %s "$T/trunc/shard-00000/data.mdb") / 2 )) "$T/trunc/shard-00000/data.mdb"
for extra in "" --skip-corrupt; do
  expect_rc 2 "$BIN/xtts-train" --cache "$T/trunc" "${tr[@]}" --steps 2 $extra
  one_line_error "shard-00000: truncated \(data.mdb has [0-9]+ bytes, its pages reach [0-9]+\)"
done
expect_rc 2 "$BIN/xtts-cache-verify" "$T/trunc"
echo "ok: a truncated shard stops xtts-train"

# 3. a token stream cut inside its 31st line: refused naming the line, nothing written;
#    also from a pipe, and on an existing cache (left as it was)
head -n 30 "$T/tokens.tsv" > "$T/cut.tsv"
sed -n 31p "$T/tokens.tsv" | cut -c 1-60 | tr -d '\n' >> "$T/cut.tsv"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/cutc" -j 2 -q "$T/cut.tsv"
one_line_error "cut.tsv:31: expected 6 tab-separated fields, found [0-5]"
[ ! -e "$T/cutc" ] || die "a refused stream created the cache directory"
expect_rc 2 bash -c 'cat "$1" | "$2" --out "$3" -j 2 -q -' _ "$T/cut.tsv" "$BIN/xtts-melcache" "$T/cutc"
one_line_error "^xtts-melcache: -:31: expected 6 tab-separated fields"
# the cache's content (lock files hold a pid and LMDB's reader table: not content)
fp() { (cd "$1" && find . -type f ! -name '.xtts-lock*' ! -name lock.mdb -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
fp_good=$(fp "$T/good")
expect_rc 2 "$BIN/xtts-melcache" --out "$T/good" -j 2 -q "$T/cut.tsv"
[ "$(fp "$T/good")" = "$fp_good" ] || die "a refused stream changed the cache"
# the producer killed at a line boundary: the stream is valid, the build finishes with
# what it got; run with the whole stream, it resumes and completes
head -n 31 "$T/tokens.tsv" > "$T/first30.tsv"
expect_rc 0 bash -c 'cat "$1" | "$2" --out "$3" -j 2 -q -' _ "$T/first30.tsv" "$BIN/xtts-melcache" "$T/short"
grep -q "30 records in, 30 selected, 30 stored" "$T/err.txt" || die "the short stream did not give 30 records"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/short" -j 2 -q "$T/tokens.tsv"
grep -q ", resumed" "$T/err.txt" || die "the whole stream did not resume the short build"
[ "$(digest "$T/short")" = "$d_ref" ] || die "short build completed by the whole stream differs"
echo "ok: a truncated token stream is refused at line 31; one cut at a line boundary builds, then resumes"

# 4. another tokenizer's stream resuming a build interrupted by a size limit
"$BIN/xtts-tokenize" --lang auto --tokenizer phonemes "$T/data/metadata.csv" > "$T/phonemes.tsv" 2>/dev/null || true
"$BIN/xtts-tokenize" --lang auto --max-tokens 300 "$T/data/metadata.csv" > "$T/mt300.tsv" 2>/dev/null || true
grep -q "tokenizer=phonemes" "$T/phonemes.tsv" || die "no phoneme stream"
rm -rf "$T/part"
expect_rc 2 bash -c 'trap "" XFSZ; ulimit -f 600; exec "$@"' _ "$BIN/xtts-melcache" --out "$T/part" -j 2 -q --commit-every 4 "$T/tokens.tsv"
grep -q "re-run to resume" "$T/err.txt" || die "the size limit did not interrupt the build"
fp_part=$(fp "$T/part")
for other in phonemes.tsv mt300.tsv; do
  for dir in part good; do
    expect_rc 2 "$BIN/xtts-melcache" --out "$T/$dir" -j 2 -q --commit-every 4 "$T/$other"
    grep -q "holds a cache built with another configuration or layout" "$T/err.txt" || { cat "$T/err.txt"; die "$other on $dir: no configuration refusal"; }
    one_line_error "use --force to replace it$"
  done
  # a finished cache's manifest says which fields differ
  case $other in
    phonemes.tsv) grep -q 'tokenizer "bytes" -> "phonemes"' "$T/err.txt" || die "the tokenizer difference is not named" ;;
    mt300.tsv) grep -q 'max_tokens 512 -> 300' "$T/err.txt" || die "the max_tokens difference is not named" ;;
  esac
done
[ "$(fp "$T/part")" = "$fp_part" ] || die "a refused stream changed the interrupted build"
[ "$(fp "$T/good")" = "$fp_good" ] || die "a refused stream changed the finished cache"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/part" -j 2 -q --commit-every 4 "$T/tokens.tsv"
[ "$(digest "$T/part")" = "$d_ref" ] || die "the resumed build differs"
echo "ok: streams of another tokenizer or --max-tokens refused on an interrupted and a finished cache"

# 5. a fifo as audio path
mkfifo "$T/fifo.wav"
awk -v f="$T/fifo.wav" -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++; print} n==5 {$1="fifo_audio"; $4=f; print}' \
  "$T/tokens.tsv" > "$T/fifo.tsv"
expect_rc 3 timeout 60 "$BIN/xtts-melcache" --out "$T/fifoc" -j 2 "$T/fifo.tsv"
grep -q "(fifo_audio): rejected: $T/fifo.wav: not a regular file" "$T/err.txt" || { cat "$T/err.txt"; die "fifo not rejected"; }
[ "$(digest "$T/fifoc")" = "$d_ref" ] || die "the build with a fifo record differs"
echo "ok: a fifo as audio is rejected"
