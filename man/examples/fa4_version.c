#include <stdio.h>
#include <string.h>
#include <fa4.h>

int main(void)
{
    const char *lib = fa4_version();

    printf("libfa4 %s, compiled against %s\n", lib,
           FA4_VERSION_STRING);
    if (strcmp(lib, FA4_VERSION_STRING) != 0) {
        fprintf(stderr, "header and library differ: rebuild "
                "against the installed fa4.h\n");
        return 1;
    }
    return 0;
}
