#!/usr/bin/env bash
# make-demo-dataset.sh DEST_DIR — generate the small multilingual demo dataset.
#
# Writes, in LJSpeech layout:
#   DEST/metadata.csv   id|text|normalized_text          (no header, as LJSpeech)
#   DEST/metadata.tsv   id<TAB>audio<TAB>text<TAB>speaker<TAB>lang   (with a header row)
#   DEST/wavs/<id>.wav  speech made with espeak-ng, converted with sox (and flac, oggenc)
#   DEST/README.txt     what is in it
#
# 60 clips in all 17 XTTS languages, several espeak-ng voices, pitches and speeds,
# 0.5-12 s long, at 16000/22050/24000/44100/48000 Hz, as 16-bit WAV, FLAC and Ogg Vorbis
# content (every file is named <id>.wav as LJSpeech wants; readers decode by content),
# one stereo clip, transcripts with numbers and abbreviations, and four broken entries
# on purpose (a missing file, an empty file, an empty transcript, a file that is not audio).
#
# The output is byte-for-byte the same on every run with the same espeak-ng, sox, flac and
# vorbis-tools: sox runs without dither in repeatable mode, FLAC carries no date, and
# every Ogg stream gets a fixed serial number.
set -euo pipefail
export LC_ALL=C.UTF-8

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: $0 DEST_DIR" >&2
  exit 1
fi
DEST=$1
for tool in espeak-ng sox flac oggenc; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is not installed (scripts/install-deps.sh)" >&2; exit 2; }
done

mkdir -p "$DEST/wavs"
# Start from a clean wavs/ so that files from an older run cannot linger.
find "$DEST/wavs" -mindepth 1 -maxdepth 1 -name '*.wav' -delete
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One clip per line: lang|espeak voice|text|normalized text (empty: same as text).
# lang is the XTTS code; the voice is an espeak-ng voice name.
cat >"$tmp/clips" <<'EOF'
en|en-us|Dr. Smith paid $12.50 on May 3rd, 1984.|Doctor Smith paid twelve dollars and fifty cents on May third, nineteen eighty-four.
en|en-us|Mr. and Mrs. Jones live at 221 Baker St., London.|Mister and Missus Jones live at two twenty-one Baker Street, London.
en|en|The meeting starts at 9:30 a.m. and ends at 4 p.m.|The meeting starts at nine thirty a m and ends at four p m.
en|en-us|About 75% of the 1,200 participants agreed.|About seventy-five percent of the one thousand two hundred participants agreed.
en|en|Prof. Lee measured 3.14 meters, i.e. roughly 10 ft.|Professor Lee measured three point one four meters, that is roughly ten feet.
en|en-us|Yes.|
en|en-us|The quick brown fox jumps over the lazy dog, while the patient narrator keeps on reading this long sentence aloud, slowly and clearly, so that the recording lasts for many seconds.|
en|en|It was the 2nd of Jan. 2021, vs. the 31st of Dec. 2020.|It was the second of January twenty twenty-one, versus the thirty-first of December twenty twenty.
en|en-us|St. Louis is 1,000 km from here.|Saint Louis is one thousand kilometers from here.
en|en|Call 555-0123 before 5 o'clock.|Call five five five, zero one two three before five o'clock.
en|en-us|Hello world, this clip is in stereo.|
en|en|The temperature fell to -5 degrees overnight.|The temperature fell to minus five degrees overnight.
es|es|El Sr. García compró 3 libros por 45 euros.|El señor García compró tres libros por cuarenta y cinco euros.
es|es|Hoy es un día muy bonito para pasear por el parque.|
es|es|La reunión empieza a las 10:15 de la mañana.|La reunión empieza a las diez y cuarto de la mañana.
fr|fr-fr|M. Dupont a payé 20 euros le 1er mai.|Monsieur Dupont a payé vingt euros le premier mai.
fr|fr-fr|Bonjour, comment allez-vous aujourd'hui ?|
fr|fr-fr|Il y a 365 jours dans une année.|Il y a trois cent soixante-cinq jours dans une année.
de|de|Dr. Müller wohnt in der Hauptstr. 12.|Doktor Müller wohnt in der Hauptstraße zwölf.
de|de|Guten Morgen, wie geht es Ihnen?|
de|de|Das Buch kostet 19,99 Euro.|Das Buch kostet neunzehn Euro neunundneunzig.
it|it|Buongiorno, come stai oggi?|
it|it|Il treno parte alle 8 e arriva alle 11.|Il treno parte alle otto e arriva alle undici.
it|it|La Sig.ra Rossi ha 2 gatti.|La signora Rossi ha due gatti.
pt|pt|Bom dia, tudo bem com você?|
pt|pt-br|O Sr. Silva tem 40 anos.|O senhor Silva tem quarenta anos.
pt|pt|Lisboa é uma cidade muito bonita.|
pl|pl|Dzień dobry, jak się masz?|
pl|pl|Mam 3 koty i 2 psy.|Mam trzy koty i dwa psy.
pl|pl|Warszawa jest stolicą Polski.|
tr|tr|Günaydın, nasılsınız?|
tr|tr|Saat 7'de buluşalım.|Saat yedide buluşalım.
tr|tr|İstanbul çok güzel bir şehir.|
ru|ru|Доброе утро, как дела?|
ru|ru|В 2020 году было 366 дней.|В две тысячи двадцатом году было триста шестьдесят шесть дней.
ru|ru|Москва — столица России.|
nl|nl|Goedemorgen, hoe gaat het met u?|
nl|nl|Ik heb 5 appels gekocht.|Ik heb vijf appels gekocht.
nl|nl|Amsterdam is de hoofdstad van Nederland.|
cs|cs|Dobrý den, jak se máte?|
cs|cs|Mám 4 sourozence.|Mám čtyři sourozence.
cs|cs|Praha je krásné město.|
ar|ar|صباح الخير، كيف حالك؟|
ar|ar|اليوم هو يوم جميل.|
ar|ar|لدي 3 كتب.|لدي ثلاثة كتب.
zh-cn|cmn|你好，今天天气很好。|
zh-cn|cmn|我有3本书。|我有三本书。
zh-cn|cmn|北京是中国的首都。|
hu|hu|Jó reggelt, hogy van?|
hu|hu|Budapest Magyarország fővárosa.|
hu|hu|A vonat 6 órakor indul.|A vonat hat órakor indul.
ko|ko|안녕하세요, 만나서 반갑습니다.|
ko|ko|서울은 한국의 수도입니다.|
ko|ko|사과 2개를 샀어요.|사과 두 개를 샀어요.
ja|ja|こんにちは、元気ですか。|
ja|ja|東京は日本の首都です。|
ja|ja|りんごを3つ買いました。|りんごをみっつ買いました。
hi|hi|नमस्ते, आप कैसे हैं?|
hi|hi|दिल्ली भारत की राजधानी है।|
hi|hi|मेरे पास 2 किताबें हैं।|मेरे पास दो किताबें हैं।
EOF

# Voices: espeak-ng variants with a pitch (0-99) and a speed (words per minute).
variants=("" "+f2" "+m3" "+f4" "+klatt" "+m7" "+f5")
pitches=(50 65 40 70 45 35 60)
speeds=(165 175 150 185 160 145 170)
rates=(22050 16000 24000 44100 48000)

: >"$tmp/metadata.csv"
printf 'id\taudio\ttext\tspeaker\tlang\n' >"$tmp/metadata.tsv"
declare -A count
i=0
while IFS='|' read -r lang voice text norm; do
  count[$lang]=$(( ${count[$lang]:-0} + 1 ))
  id=$(printf '%s_%03d' "$lang" "${count[$lang]}")
  v=$(( i % ${#variants[@]} ))
  variant=${variants[$v]}
  speaker="${voice}${variant:+_${variant#+}}"
  rate=${rates[$(( i % ${#rates[@]} ))]}
  case $(( i % 6 )) in 2) kind=flac ;; 4) kind=ogg ;; *) kind=wav ;; esac
  channels=1
  if [ "$id" = "en_011" ]; then channels=2; kind=wav; rate=44100; fi

  espeak-ng -v "${voice}${variant}" -p "${pitches[$v]}" -s "${speeds[$v]}" -w "$tmp/raw.wav" "$text"
  # Resample (and for the stereo clip, make the right channel a quieter copy), 16-bit,
  # no dither; a short lead-in of silence as recordings have.
  if [ $channels -eq 2 ]; then
    sox -D -R -V1 "$tmp/raw.wav" -b 16 -r "$rate" "$tmp/clip.wav" remix 1 1v0.7 pad 0.1 0
  elif [ "$id" = "en_006" ]; then
    # the shortest clip: without espeak-ng's trailing silence
    sox -D -R -V1 "$tmp/raw.wav" -b 16 -r "$rate" "$tmp/clip.wav" reverse silence 1 0.02 1% reverse pad 0.05 0.05
  else
    sox -D -R -V1 "$tmp/raw.wav" -b 16 -r "$rate" "$tmp/clip.wav" pad 0.1 0
  fi
  out="$DEST/wavs/$id.wav"
  case $kind in
    wav) cp "$tmp/clip.wav" "$out" ;;
    flac) flac --silent --force --best -o "$out" "$tmp/clip.wav" ;;
    ogg) oggenc -Q --serial $(( 1000 + i )) -q 4 -o "$out" "$tmp/clip.wav" ;;
  esac
  printf '%s|%s|%s\n' "$id" "$text" "${norm:-$text}" >>"$tmp/metadata.csv"
  printf '%s\twavs/%s.wav\t%s\t%s\t%s\n' "$id" "$id" "$text" "$speaker" "$lang" >>"$tmp/metadata.tsv"
  i=$(( i + 1 ))
done <"$tmp/clips"

# Broken on purpose, so that every stage shows how it rejects them.
#   bad_missing: listed, but there is no audio file
#   bad_empty:   a 0-byte audio file
#   bad_notext:  good audio, empty transcript
#   bad_garbage: a file that is not audio at all
sox -D -R -V1 "$DEST/wavs/en_001.wav" "$DEST/wavs/bad_notext.wav"
: >"$DEST/wavs/bad_empty.wav"
{
  printf 'This is not audio. It is a text file named like a WAV file.\n'
  for k in $(seq 0 255); do printf "\\$(printf '%03o' $(( (k * 73 + 41) % 256 )))"; done
} >"$DEST/wavs/bad_garbage.wav"
for b in "bad_missing|The audio file for this line does not exist." \
         "bad_empty|This line points to an empty audio file." \
         "bad_notext|" \
         "bad_garbage|This line points to a file that is not audio."; do
  id=${b%%|*}; text=${b#*|}
  printf '%s|%s|%s\n' "$id" "$text" "$text" >>"$tmp/metadata.csv"
  printf '%s\twavs/%s.wav\t%s\t%s\t%s\n' "$id" "$id" "$text" "en-us" "en" >>"$tmp/metadata.tsv"
done

mv "$tmp/metadata.csv" "$DEST/metadata.csv"
mv "$tmp/metadata.tsv" "$DEST/metadata.tsv"

cat >"$DEST/README.txt" <<EOF
xtts-prep demo dataset (generated by scripts/make-demo-dataset.sh; do not edit)

Layout: LJSpeech.
  metadata.csv   id|text|normalized_text, one line per clip, no header
  metadata.tsv   the same clips as TSV with a header row: id, audio, text, speaker, lang
                 (audio paths are relative to this directory)
  wavs/<id>.wav  the audio

Contents: $i clips of synthetic speech (espeak-ng $(espeak-ng --version | awk '{print $4}'), sox) in the 17
XTTS languages (en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja hi), with several
espeak-ng voices, pitches and speeds; 0.5-12 s each; sample rates 16000, 22050, 24000,
44100 and 48000 Hz; one stereo clip (en_011). Transcripts contain numbers and
abbreviations ("Dr. Smith paid \$12.50 on May 3rd, 1984."); normalized_text spells them out.

Every audio file is named <id>.wav, as LJSpeech layout requires, but not every file holds
WAV data: some hold FLAC and some Ogg Vorbis. Readers must decode by content (magic
bytes), not by the file name's extension; libsndfile and sox both do.

Four entries are broken on purpose and must be rejected by the pipeline:
  bad_missing  listed in the metadata, but wavs/bad_missing.wav does not exist
  bad_empty    wavs/bad_empty.wav is an empty (0-byte) file
  bad_notext   the transcript is empty (the audio is fine)
  bad_garbage  wavs/bad_garbage.wav is not audio at all
EOF
echo "demo dataset: $i clips + 4 broken entries in $DEST" >&2
