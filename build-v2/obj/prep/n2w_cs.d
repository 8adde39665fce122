build-v2/obj/prep/n2w_cs.o: prep/n2w_cs.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
