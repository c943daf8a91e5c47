/* kernlint's stand-in for CUDA's <cooperative_groups.h> in the semantic pass. The real header
   declares nothing outside nvcc's device pass (it is guarded by __CUDACC__), so the host-side
   parse kernlint does would see no `cooperative_groups` at all. Declarations only, enough for
   types and calls to resolve: nothing here is compiled or run. */
#pragma once

namespace cooperative_groups {

struct dim3_like {
  unsigned int x, y, z;
};

class thread_group {
 public:
  void sync() const;
  unsigned long long size() const;
  unsigned long long num_threads() const;
  unsigned long long thread_rank() const;
};

class thread_block : public thread_group {
 public:
  static void sync();
  dim3_like group_index() const;
  dim3_like thread_index() const;
  dim3_like group_dim() const;
  dim3_like dim_threads() const;
};

class grid_group : public thread_group {
 public:
  bool is_valid() const;
  unsigned long long block_rank() const;
  unsigned long long num_blocks() const;
  dim3_like group_dim() const;
  dim3_like block_index() const;
  dim3_like dim_blocks() const;
};

class cluster_group : public thread_group {
 public:
  static void sync();
  void barrier_arrive() const;
  void barrier_wait() const;
  unsigned int block_rank() const;
  unsigned int num_blocks() const;
  dim3_like block_index() const;
  dim3_like dim_blocks() const;
  template <typename T>
  T* map_shared_rank(T* addr, int rank) const;
  template <typename T>
  unsigned int query_shared_rank(T* addr) const;
};

class coalesced_group : public thread_group {
 public:
  unsigned int meta_group_rank() const;
  unsigned int meta_group_size() const;
  template <typename T>
  T shfl(T var, unsigned int src_rank) const;
  template <typename T>
  T shfl_down(T var, int delta) const;
  template <typename T>
  T shfl_up(T var, int delta) const;
  int any(int predicate) const;
  int all(int predicate) const;
  unsigned int ballot(int predicate) const;
};

template <unsigned int Size, typename ParentT = void>
class thread_block_tile : public coalesced_group {
 public:
  static constexpr unsigned long long num_threads() { return Size; }
  static constexpr unsigned long long size() { return Size; }
  template <typename T>
  T shfl_xor(T var, unsigned int lane_mask) const;
  template <typename T>
  unsigned int match_any(T value) const;
};

thread_block this_thread_block();
grid_group this_grid();
cluster_group this_cluster();
coalesced_group coalesced_threads();
thread_group tiled_partition(const thread_group& parent, unsigned int tile_size);
template <unsigned int Size, typename ParentT>
thread_block_tile<Size, ParentT> tiled_partition(const ParentT& parent);
template <typename Group>
void sync(const Group& group);

template <typename T>
struct plus {
  T operator()(T a, T b) const;
};
template <typename T>
struct less {
  T operator()(T a, T b) const;
};
template <typename T>
struct greater {
  T operator()(T a, T b) const;
};
template <typename T>
struct bit_and {
  T operator()(T a, T b) const;
};
template <typename T>
struct bit_or {
  T operator()(T a, T b) const;
};
template <typename T>
struct bit_xor {
  T operator()(T a, T b) const;
};
template <typename Group, typename T, typename Op>
T reduce(const Group& group, T value, Op op);
template <typename Group, typename T, typename Op>
T inclusive_scan(const Group& group, T value, Op op);
template <typename Group, typename T>
T inclusive_scan(const Group& group, T value);
template <typename Group, typename T, typename Op>
T exclusive_scan(const Group& group, T value, Op op);
template <typename Group, typename T>
T exclusive_scan(const Group& group, T value);
template <typename Group, typename T, typename Size>
void memcpy_async(const Group& group, T* dst, const T* src, Size count);
template <typename Group>
void wait(const Group& group);
template <unsigned int N, typename Group>
void wait_prior(const Group& group);

}  // namespace cooperative_groups
