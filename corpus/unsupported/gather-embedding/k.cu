// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Embedding lookup: out[t][:] = table[ids[t]][:] * scale, 16 tokens x 64 features,
// float4 per thread. The load address depends on the contents of the index tensor ids.
template <int DIM, int TOKENS>
__global__ void __launch_bounds__(DIM / 4 * TOKENS)
embedding_gather(const int* __restrict__ ids, const float* __restrict__ table,
                 float* __restrict__ out, float scale) {
  const int tok = threadIdx.x / (DIM / 4);
  const int vec = threadIdx.x % (DIM / 4);
  const int row = __ldg(ids + tok);
  float4 v = __ldg(reinterpret_cast<const float4*>(table + static_cast<long>(row) * DIM) + vec);
  v.x *= scale; v.y *= scale; v.z *= scale; v.w *= scale;
  reinterpret_cast<float4*>(out + tok * DIM)[vec] = v;
}
template __global__ void embedding_gather<64, 16>(const int*, const float*, float*, float);
