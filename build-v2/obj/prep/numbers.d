build-v2/obj/prep/numbers.o: prep/numbers.c prep/numbers.h prep/strbuf.h
prep/numbers.h:
prep/strbuf.h:
