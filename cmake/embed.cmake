# Writes the bytes of IN as the C array NAME (and NAME_size) into OUT: the
# live view's page compiled into the strata program (cli/view.h).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake */\n#include <stddef.h>\nconst unsigned char ${NAME}[] = {\n${body}0x00};\nconst size_t ${NAME}_size = ${size};\n")
