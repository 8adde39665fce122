build-v2/obj/tests/test_reader.o: tests/test_reader.c \
 /usr/include/libpng16/png.h /usr/include/libpng16/pnglibconf.h \
 /usr/include/libpng16/pngconf.h cache/inspect.h cache/reader.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h formats/record.h \
 cache/verify.h prep/audio.h tests/cache_fixture.h cache/writer.h
/usr/include/libpng16/png.h:
/usr/include/libpng16/pnglibconf.h:
/usr/include/libpng16/pngconf.h:
cache/inspect.h:
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
cache/verify.h:
prep/audio.h:
tests/cache_fixture.h:
cache/writer.h:
