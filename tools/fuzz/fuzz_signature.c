/* libFuzzer target: the kernel signature parser (plugins' and users'
 * signatures, "float a, const float *x, int n"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    hkc_signature sig;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    if (hkc_signature_parse(text, &sig, &err) == 0) {
        hkc_strbuf out;
        hkc_strbuf_init(&out);
        hkc_signature_format(&sig, &out);
        hkc_strbuf_free(&out);
        hkc_signature_free(&sig);
    }
    hkc_strbuf_free(&err);
    free(text);
    return 0;
}
