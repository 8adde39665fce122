build-v2/obj/prep/romanize.o: prep/romanize.c prep/romanize.h \
 prep/strbuf.h
prep/romanize.h:
prep/strbuf.h:
