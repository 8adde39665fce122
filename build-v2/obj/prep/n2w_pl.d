build-v2/obj/prep/n2w_pl.o: prep/n2w_pl.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
