build-v2/obj/prep/n2w_nl.o: prep/n2w_nl.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
