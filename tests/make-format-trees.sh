#!/usr/bin/env bash
# make-format-trees.sh DEST — small datasets in the real layout of every metadata format
# xtts-tokenize reads (docs/datasets.md), with each format's quirks, for tests/e2e/formats_*.sh.
#
#   DEST/ljspeech/       metadata.csv (id|text|normalized_text, no header) + wavs/
#   DEST/tsv/            list.tsv with aliased column names (audio_filepath, transcription,
#                        speaker_name, locale, split) + audio/
#   DEST/coqui/          metadata_train.csv / metadata_eval.csv as XTTS fine-tuning recipes
#                        write them: header audio_file|text|speaker_name|language, wavs/
#   DEST/vctk/           VCTK-Corpus-0.92: txt/<spk>/<spk>_<n>.txt, wav48_silence_trimmed/
#                        <spk>/<spk>_<n>_mic1.flac and _mic2.flac; p315 has audio but no txt/;
#                        p226_003 has a transcript but no audio
#   DEST/vctk-old/       VCTK-Corpus: txt/ and wav48/<spk>/<spk>_<n>.wav
#   DEST/libritts/       LibriTTS: train-clean-100/<spk>/<chapter>/<id>.wav, .normalized.txt,
#                        .original.txt and <spk>_<chapter>.trans.tsv (tab-separated);
#                        dev-clean/ holds a chapter with per-utterance .txt files only
#                        (as LibriTTS-R ships some)
#   DEST/commonvoice/en/ train.tsv and dev.tsv with Common Voice's columns, a CSV-quoted
#                        sentence, clips/*.mp3
#   DEST/mailabs/        uk_UK/by_book/female/<speaker>/<book>/metadata.csv + wavs/, and a
#                        by_book/mix/<book>/ without a speaker
#   DEST/nemo/           manifest.json (JSON lines: audio_filepath, text, duration, speaker, lang)
#   DEST/lhotse/         cuts.jsonl.gz (a CutSet, one cut a segment of its recording) and
#                        recordings.jsonl.gz + supervisions.jsonl.gz
#
# Audio: short sine tones made with sox (the tests check the reading of metadata and the
# pipeline, not speech), at 16000-48000 Hz, as WAV, FLAC and MP3.
set -euo pipefail
export LC_ALL=C.UTF-8
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 1; }
D=$(mkdir -p "$1" && cd "$1" && pwd)
command -v sox >/dev/null || { echo "$0: sox is not installed (scripts/install-deps.sh)" >&2; exit 2; }
PY=${PYTHON:-/usr/bin/python3}

n=0
tone() { # tone FILE [RATE]: a 0.4-0.7 s tone, its pitch from a counter
  n=$((n + 1))
  mkdir -p "$(dirname "$1")"
  local bits="-b 16"; case $1 in *.mp3) bits="" ;; esac
  sox -R -n -r "${2:-22050}" $bits -c 1 "$1" synth "0.$((4 + n % 4))" sine "$((200 + 37 * n))" vol 0.3
}

# ---- ljspeech
mkdir -p "$D/ljspeech/wavs"
printf 'LJ001-0001|Printing, in the only sense with which we are at present concerned.|\n' > "$D/ljspeech/metadata.csv"
printf 'LJ001-0002|in being comparatively modern. It cost $5.|in being comparatively modern. It cost five dollars.\n' >> "$D/ljspeech/metadata.csv"
printf 'LJ001-0003|For although the Chinese took impressions from wood blocks.|\n' >> "$D/ljspeech/metadata.csv"
for i in 1 2 3; do tone "$D/ljspeech/wavs/LJ001-000$i.wav"; done

# ---- tsv with aliased column names
mkdir -p "$D/tsv/audio"
{
  printf 'audio_filepath\ttranscription\tspeaker_name\tlocale\tsplit\n'
  printf 'audio/t1.wav\tGood morning, everyone.\tanna\ten\ttrain\n'
  printf 'audio/t2.flac\tBuenos días a todos.\tbruno\tes\tval\n'
  printf 'audio/t3.wav\tMoni, habari za asubuhi?\tchiku\tsw\ttest\n'
} > "$D/tsv/list.tsv"
tone "$D/tsv/audio/t1.wav" 16000; tone "$D/tsv/audio/t2.flac" 44100; tone "$D/tsv/audio/t3.wav"

# ---- coqui (XTTS fine-tuning CSV)
mkdir -p "$D/coqui/wavs"
{
  printf 'audio_file|text|speaker_name|language\n'
  printf 'wavs/HO-en-01.wav|The quick brown fox jumps over the lazy dog.|en-gb plus m seven|en\n'
  printf 'wavs/HO-en-02.wav|She sells sea shells by the sea shore.|en-gb plus m seven|en\n'
} > "$D/coqui/metadata_train.csv"
{
  printf 'audio_file|text|speaker_name|language\n'
  printf 'wavs/HO-de-01.wav|Guten Morgen, wie geht es dir?|coqui|de\n'
} > "$D/coqui/metadata_eval.csv"
for f in HO-en-01 HO-en-02 HO-de-01; do tone "$D/coqui/wavs/$f.wav" 24000; done

# ---- vctk 0.92
V="$D/vctk/VCTK-Corpus-0.92"
mkdir -p "$V/txt/p225" "$V/txt/p226"
printf 'Please call Stella.\n' > "$V/txt/p225/p225_001.txt"
printf 'Ask her to bring these things with her from the store.\n' > "$V/txt/p225/p225_002.txt"
printf 'Six spoons of fresh snow peas.\r\n' > "$V/txt/p226/p226_001.txt"
printf 'Five thick slabs of blue cheese.\n' > "$V/txt/p226/p226_003.txt"
for u in p225_001 p225_002 p226_001; do
  s=${u%%_*}
  tone "$V/wav48_silence_trimmed/$s/${u}_mic1.flac" 48000
  tone "$V/wav48_silence_trimmed/$s/${u}_mic2.flac" 48000
done
tone "$V/wav48_silence_trimmed/p315/p315_001_mic1.flac" 48000
printf 'ID  AGE  GENDER  ACCENTS  REGION COMMENTS\np225  23  F    English    Southern  England\n' > "$V/speaker-info.txt"

# ---- vctk (old layout)
O="$D/vctk-old/VCTK-Corpus"
mkdir -p "$O/txt/p225"
printf 'Please call Stella.\n' > "$O/txt/p225/p225_001.txt"
tone "$O/wav48/p225/p225_001.wav" 48000

# ---- libritts
L="$D/libritts/LibriTTS"
c="$L/train-clean-100/19/198"
mkdir -p "$c"
printf '19_198_000000_000000\tThis is Chapter 1 of "Northanger Abbey."\tThis is chapter one of "Northanger Abbey."\n' > "$c/19_198.trans.tsv"
printf '19_198_000000_000001\tIt was 1803.\tIt was eighteen oh three.\n' >> "$c/19_198.trans.tsv"
for u in 19_198_000000_000000 19_198_000000_000001; do tone "$c/$u.wav" 24000; done
printf 'This is chapter one of "Northanger Abbey."' > "$c/19_198_000000_000000.normalized.txt"
printf 'This is Chapter 1 of "Northanger Abbey."' > "$c/19_198_000000_000000.original.txt"
printf 'It was eighteen oh three.' > "$c/19_198_000000_000001.normalized.txt"
printf 'It was 1803.' > "$c/19_198_000000_000001.original.txt"
c="$L/dev-clean/84/121123"
mkdir -p "$c"
printf 'Go, do you hear?' > "$c/84_121123_000008_000000.normalized.txt"
printf 'Go, do you hear?' > "$c/84_121123_000008_000000.original.txt"
tone "$c/84_121123_000008_000000.wav" 24000

# ---- common voice
C="$D/commonvoice/en"
mkdir -p "$C/clips"
hdr='client_id\tpath\tsentence_id\tsentence\tsentence_domain\tup_votes\tdown_votes\tage\tgender\taccents\tvariant\tlocale\tsegment\n'
{
  printf "$hdr"
  printf 'a1b2c3\tcommon_voice_en_100.mp3\ts1\tThe stew was cold.\t\t2\t0\ttwenties\tmale_masculine\t\t\ten\t\n'
  printf 'a1b2c3\tcommon_voice_en_101.mp3\ts2\t"""Hello,"" she said."\t\t2\t0\ttwenties\tmale_masculine\t\t\ten\t\n'
} > "$C/train.tsv"
{
  printf "$hdr"
  printf 'd4e5f6\tcommon_voice_en_102.mp3\ts3\tA quiet evening at home.\t\t3\t1\t\t\t\t\ten\t\n'
} > "$C/dev.tsv"
for k in 100 101 102; do tone "$C/clips/common_voice_en_$k.mp3" 48000; done

# ---- m-ailabs (Ukrainian: a language beyond XTTS's 17)
M="$D/mailabs/uk_UK/by_book"
b="$M/female/sumska/kazka"
mkdir -p "$b/wavs"
printf 'kazka_01_f000001|Жили собі дід та баба.|Жили собі дід та баба.\n' > "$b/metadata.csv"
printf 'kazka_01_f000002|Була в них курочка ряба.|Була в них курочка ряба.\n' >> "$b/metadata.csv"
for u in kazka_01_f000001 kazka_01_f000002; do tone "$b/wavs/$u.wav" 16000; done
b="$M/mix/zbirka"
mkdir -p "$b/wavs"
printf 'zbirka_01_f000001|Добрий вечір.|Добрий вечір.\n' > "$b/metadata.csv"
tone "$b/wavs/zbirka_01_f000001.wav" 16000

# ---- nemo
mkdir -p "$D/nemo/wavs"
for u in n1 n2; do tone "$D/nemo/wavs/$u.wav" 22050; done
{
  printf '{"audio_filepath": "wavs/n1.wav", "text": "hello world", "duration": 0.5, "speaker": 3, "lang": "en"}\n'
  printf '{"audio_filepath": "wavs/n2.wav", "duration": 0.6, "text": "bonjour le monde", "speaker": 4, "lang": "fr"}\n'
} > "$D/nemo/manifest.json"

# ---- lhotse
mkdir -p "$D/lhotse/wavs"
for u in r1 r2 r3; do tone "$D/lhotse/wavs/$u.wav" 16000; done
"$PY" - "$D/lhotse" <<'PY'
import gzip, json, sys, wave
d = sys.argv[1]
recs, sups = [], []
for i, (rid, text, spk, lang) in enumerate([("r1", "first cut here", "s1", "English"),
                                            ("r2", "second cut there", "s2", "en"),
                                            ("r3", "only a segment", "s1", "en")]):
    path = f"{d}/wavs/{rid}.wav"
    with wave.open(path) as w:
        n, sr = w.getnframes(), w.getframerate()
    dur = round(n / sr, 6)
    recs.append({"id": rid, "sources": [{"type": "file", "channels": [0], "source": path}],
                 "sampling_rate": sr, "num_samples": n, "duration": dur, "channel_ids": [0]})
    start, sdur = (0.1, round(dur - 0.1, 6)) if rid == "r3" else (0.0, dur)
    sups.append({"id": f"{rid}-sup", "recording_id": rid, "start": start, "duration": sdur, "channel": 0,
                 "text": text, "language": lang, "speaker": spk})
with gzip.open(f"{d}/cuts.jsonl.gz", "wt") as f:
    for r, s in zip(recs, sups):
        cut = {"id": f"{r['id']}-cut", "start": s["start"], "duration": s["duration"], "channel": 0,
               "supervisions": [dict(s, start=0.0)], "recording": r, "type": "MonoCut"}
        f.write(json.dumps(cut) + "\n")
with gzip.open(f"{d}/recordings.jsonl.gz", "wt") as f:
    for r in recs: f.write(json.dumps(r) + "\n")
with gzip.open(f"{d}/supervisions.jsonl.gz", "wt") as f:
    for s in sups: f.write(json.dumps(s) + "\n")
PY
echo "$D"
