// Runtime -> template dispatch, one style for every kernel launcher (FA1,
// FA2, standard attention). A compiled instantiation is a type whose `key`
// holds its template arguments as integers (an attention tile: head_dim, B_r,
// B_c; a GEMM tile: m, n, k); a menu is a List of such types, built from the
// menu's X-macro list:
//   #define TILE(D, BM, BN) ::with<AttentionTile<D, BM, BN>>
//   using Tiles = List<> FA2_FWD_MENU(TILE);
// `find` calls a generic lambda with the entry whose key equals the runtime
// values, so each launch is written once, as a template, and the menu that
// dispatches is the menu that is listed (`for_each`) and checked (`contains`).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include "kernels/common/attention_api.h"
#include "sim/common/error.h"

namespace iosim::kernels::dispatch {

template <class... Ts>
struct List {
  // List<A>::with<B> is List<A, B>: how an X-macro menu becomes a List.
  template <class... Us>
  using with = List<Ts..., Us...>;
};

// The entries of several Lists, in order.
template <class... Lists>
struct Join;
template <>
struct Join<> {
  using type = List<>;
};
template <class... Ts>
struct Join<List<Ts...>> {
  using type = List<Ts...>;
};
template <class... Ts, class... Us, class... Rest>
struct Join<List<Ts...>, List<Us...>, Rest...> {
  using type = typename Join<List<Ts..., Us...>, Rest...>::type;
};
template <class... Lists>
using join = typename Join<Lists...>::type;

// The entries T of a List for which Keep<T>::value holds, in order.
template <template <class> class Keep, class L>
struct KeepIf;
template <template <class> class Keep, class... Ts>
struct KeepIf<Keep, List<Ts...>> {
  using type = join<std::conditional_t<Keep<Ts>::value, List<Ts>, List<>>...>;
};
template <template <class> class Keep, class L>
using keep_if = typename KeepIf<Keep, L>::type;

// An attention kernel's tile (FA1, FA2): head dim, B_r, B_c.
template <int D, int BM, int BN>
struct AttentionTile {
  static constexpr int d = D, bm = BM, bn = BN;
  static constexpr std::array<i64, 3> key{D, BM, BN};
};
inline std::array<i64, 3> tile_key(const AttentionConfig& c) {
  return {c.problem.head_dim, c.block_m, c.block_n};
}

// One integer template argument (e.g. threads per softmax row).
template <int V>
struct Int : std::integral_constant<int, V> {
  static constexpr std::array<i64, 1> key{V};
};

// Calls fn(T{}) for the entry T of the menu whose T::key equals `key` (keys
// are unique within a menu); returns false when no entry does.
template <std::size_t N, class... Ts, class Fn>
bool find(const std::array<i64, N>& key, List<Ts...>, Fn&& fn) {
  return ((Ts::key == key ? (fn(Ts{}), true) : false) || ...);
}

template <std::size_t N, class... Ts>
bool contains(const std::array<i64, N>& key, List<Ts...>) {
  return ((Ts::key == key) || ...);
}

// Calls fn(T{}) for every entry, in order (menus in messages).
template <class... Ts, class Fn>
void for_each(List<Ts...>, Fn&& fn) {
  (fn(Ts{}), ...);
}

// Calls fn(Elem{}) with the element type of `dtype`: __half or __nv_bfloat16.
template <class Fn>
void element_type(workload::DType dtype, Fn&& fn) {
  switch (dtype) {
    case workload::DType::fp16: fn(__half{}); return;
    case workload::DType::bf16: fn(__nv_bfloat16{}); return;
    case workload::DType::fp32: break;
  }
  throw InputError("the CUDA kernels take fp16 or bf16 inputs, not " + std::string(workload::to_string(dtype)));
}

// Calls fn(Tile{}, Elem{}) for the config's tile in `tiles` and its element
// type; returns false when the tile is not in the list.
template <class... Ts, class Fn>
bool find_tile(const AttentionConfig& c, List<Ts...> tiles, Fn&& fn) {
  return find(tile_key(c), tiles, [&](auto tile) {
    element_type(c.problem.dtype, [&](auto elem) { fn(tile, elem); });
  });
}

}  // namespace iosim::kernels::dispatch
