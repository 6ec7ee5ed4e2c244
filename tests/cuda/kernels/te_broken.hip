#include <hip/hip_runtime.h>
extern "C" __global__ void broken(float *y) {
  y[threadIdx.x] = undeclared_thing;
}
