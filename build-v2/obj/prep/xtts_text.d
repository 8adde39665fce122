build-v2/obj/prep/xtts_text.o: prep/xtts_text.c prep/xtts_text.h \
 common/xtts_common.h
prep/xtts_text.h:
common/xtts_common.h:
