build-v2/obj/prep/num2words.o: prep/num2words.c prep/num2words.h \
 prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
