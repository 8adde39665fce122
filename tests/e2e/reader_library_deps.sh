#!/usr/bin/env bash
# libxtts-reader.so (the reader's C interface, what the Python package loads) needs LMDB, zstd
# and jansson and nothing else of the build's libraries: ldd lists no FFTW, no libsndfile (nor
# the codecs behind it), and its NEEDED entries are those three and the C library's.
set -euo pipefail
: "${BUILD:?}"
so=$BUILD/lib/libxtts-reader.so
die() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$so" ] || die "$so not built"

deps=$(ldd "$so")
# a sanitizer build links its runtimes too (libasan, libubsan): the plain build is the one checked
if grep -q 'lib[a-z]*san' <<<"$deps"; then echo "skip: a sanitizer build (its runtimes are linked in)"; exit 0; fi
# (matched from a here-string: under pipefail, grep -q's early exit could end a producer by
# SIGPIPE and hide the very match it looks for)
for lib in fftw sndfile FLAC vorbis opus mpg123 mp3lame soxr samplerate png espeak; do
  if grep -qi "$lib" <<<"$deps"; then echo "$deps" >&2; die "libxtts-reader.so depends on $lib"; fi
done
for lib in liblmdb libzstd libjansson; do
  grep -q "$lib" <<<"$deps" || { echo "$deps" >&2; die "libxtts-reader.so does not name $lib"; }
done
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
extra=$(tr ' ' '\n' <<<"$needed" | grep -Ev '^(liblmdb|libzstd|libjansson|libm|libc|libpthread|ld-linux-x86-64)\.so' || true)
[ -z "$(tr -d '[:space:]' <<<"$extra")" ] || die "libxtts-reader.so needs more than LMDB, zstd, jansson and libc: $needed"
echo "reader_library_deps: ok ($needed)"
