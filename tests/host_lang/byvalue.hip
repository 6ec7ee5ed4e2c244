// A kernel with vectors passed by value, in a module of its own: the runtime's
// signature parser does not take them yet (see README.md).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

__constant__ float cscale = 2.0f;

// Kernarg layout: mixed alignments, vectors by value.
extern "C" __global__ void params(char c, double d, short s, float4 v, int i, __half h,
                                  long long ll, float2 f2, float *out)
{
    if (threadIdx.x)
        return;
    out[0] = c;
    out[1] = (float)d;
    out[2] = s;
    out[3] = v.x + v.y * 10 + v.z * 100 + v.w * 1000;
    out[4] = (float)i;
    out[5] = __half2float(h);
    out[6] = (float)ll;
    out[7] = f2.x - f2.y;
    out[8] = cscale;
}
