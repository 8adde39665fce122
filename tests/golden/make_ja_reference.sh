#!/usr/bin/env bash
# make_ja_reference.sh DIR — builds the reference for Japanese romanization in DIR: cutlet
# (the romanizer XTTS's tokenizer calls) and what it imports, from their sources, over
# Debian's MeCab and UniDic (unidic-mecab), so that the golden scripts run the real thing:
#   cutlet v0.5.0 (polm/cutlet), fugashi (polm/fugashi, built with Debian's cython3),
#   jaconv (ikegami-yukino/jaconv, pure Python), mojimoji 0.0.12 (studio-ousia/mojimoji,
#   the newest that Debian 12's Cython 0.29 compiles).
# Each repository must already be a git checkout or bare mirror given by the environment:
#   CUTLET_GIT FUGASHI_GIT JACONV_GIT MOJIMOJI_GIT (e.g. fetched bare mirrors).
# Needs: apt-get install cython3 python3-dev libmecab-dev unidic-mecab.
# Then: tests/golden/make_romanize_ja_golden.py DIR golden|heldout, and
#       tests/golden/check_romanize_ja_random.py DIR SEED N.
set -euo pipefail
D=${1:?usage: make_ja_reference.sh DIR}
mkdir -p "$D"
get() { # repo-git name ref
  rm -rf "$D/$2"; git clone -q "$1" "$D/$2"; git -C "$D/$2" checkout -q "$3"
}
get "${CUTLET_GIT:?}" cutlet v0.5.0
get "${FUGASHI_GIT:?}" fugashi HEAD
get "${JACONV_GIT:?}" jaconv HEAD
get "${MOJIMOJI_GIT:?}" mojimoji 0.0.12
PYINC=$(/usr/bin/python3-config --includes)
EXT=$(/usr/bin/python3-config --extension-suffix)
(cd "$D/fugashi/fugashi" && cython3 -3 fugashi.pyx -o fugashi.c >/dev/null &&
  gcc -O1 -shared -fPIC $PYINC -Iinclude $(mecab-config --cflags) fugashi.c -o "fugashi$EXT" $(mecab-config --libs) 2>/dev/null)
(cd "$D/mojimoji" && cython3 -3 --cplus mojimoji.pyx -o mojimoji.cpp >/dev/null &&
  g++ -O1 -shared -fPIC $PYINC mojimoji.cpp -o "mojimoji$EXT" 2>/dev/null)
/usr/bin/python3 - "$D" <<'PY'
import sys
d = sys.argv[1]
sys.path[:0] = [d + "/fugashi", d + "/mojimoji", d + "/jaconv", d + "/cutlet"]
import cutlet
print("reference ready:", cutlet.Cutlet(mecab_args="-r /etc/mecabrc -d /var/lib/mecab/dic/unidic").romaji("東京タワー"))
PY
