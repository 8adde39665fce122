build-v2/obj/prep/n2w_fr.o: prep/n2w_fr.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
