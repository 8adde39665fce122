build-v2/obj/cache/inspect.o: cache/inspect.c cache/inspect.h \
 cache/reader.h common/xtts_common.h formats/manifest.h kernels/mel.h \
 formats/record.h /usr/include/libpng16/png.h \
 /usr/include/libpng16/pnglibconf.h /usr/include/libpng16/pngconf.h
cache/inspect.h:
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
/usr/include/libpng16/png.h:
/usr/include/libpng16/pnglibconf.h:
/usr/include/libpng16/pngconf.h:
