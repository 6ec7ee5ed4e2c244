// Kernels with vectors passed by value, in a module of their own: packed by
// hand (hk_launch_packed) and from lanes (hk_launch with hk_arg_vector).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

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

// Every lane of vectors of each width and alignment, as floats.
extern "C" __global__ void lanes(int2 a, uchar4 u, float3 t, short s, __half2 h, double2 q,
                                 char3 c3, __hip_bfloat162 b, ushort1 one, float *out)
{
    if (threadIdx.x)
        return;
    out[0] = (float)a.x;
    out[1] = (float)a.y;
    out[2] = u.x;
    out[3] = u.y;
    out[4] = u.z;
    out[5] = u.w;
    out[6] = t.x;
    out[7] = t.y;
    out[8] = t.z;
    out[9] = s;
    out[10] = __low2float(h);
    out[11] = __high2float(h);
    out[12] = (float)q.x;
    out[13] = (float)q.y;
    out[14] = c3.x;
    out[15] = c3.y;
    out[16] = c3.z;
    out[17] = __low2float(b);
    out[18] = __high2float(b);
    out[19] = one.x;
}
