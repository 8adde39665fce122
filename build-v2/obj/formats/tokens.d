build-v2/obj/formats/tokens.o: formats/tokens.c formats/tokens.h \
 common/xtts_common.h
formats/tokens.h:
common/xtts_common.h:
