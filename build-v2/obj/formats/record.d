build-v2/obj/formats/record.o: formats/record.c formats/record.h \
 common/xtts_common.h
formats/record.h:
common/xtts_common.h:
