// SPDX-License-Identifier: Apache-2.0
// bench/peers_onednn.hpp: oneDNN primitives with post-ops as a peer (its hand-crafted fusion).
//
//   relu(a*b+c)          binary mul(a, b), post-ops: binary add(c), eltwise relu
//   sigmoid((x+bias)*s)  binary add(x, bias[1,C]), post-ops: eltwise linear(s), eltwise logistic
//   gelu_tanh            eltwise gelu_tanh
//   swish                eltwise swish (alpha 1)
//   two_outputs          binary add(a, b) -> y1, then binary mul(y1, c) -> y2 (a primitive has
//                        one destination, so y1 is read back)
//   softmax              softmax_forward over axis 1 (the last)
//   the bf16 bias graph  as sigmoid((x+bias)*s), on bf16 memory (oneDNN computes in f32 and
//                        rounds the destination to nearest even)
// Tensors are 2-D [rows, C] plain (format tag ab), f32 or bf16 as the workload's, forward
// inference, wrapping the case's buffers (no copies).
// Threads: Debian's libdnnl2 is built with DNNL_CPU_RUNTIME = OMP (dnnl_config.h) and links the
// same libgomp as the rest of the program, so it runs on omp_get_max_threads() threads. Each
// thread count gets its own primitive, created and executed under omp_set_num_threads(t) (the
// previous setting is restored after each call).
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <unordered_map>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline dnnl::engine& onednn_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

/// "oneDNN 2.6.3 (cpu runtime OMP)".
inline std::string onednn_version() {
  const dnnl_version_t* v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (cpu runtime " +
         (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OMP" : "not OMP") + ")";
}

/// The primitives of one workload for one thread count, with their arguments bound.
struct OnednnPlan {
  std::vector<dnnl::primitive> prims;
  std::vector<std::unordered_map<int, dnnl::memory>> args;
  std::string impl; // implementation names, e.g. "jit:avx512_core"

  /// Appends the primitive of `pd` (Prim: dnnl::binary, dnnl::eltwise_forward, ...).
  template <class Prim>
  void add(const typename Prim::primitive_desc& pd, std::unordered_map<int, dnnl::memory> a) {
    prims.push_back(Prim(pd));
    args.push_back(std::move(a));
    impl += (impl.empty() ? "" : " + ") + std::string(pd.impl_info_str());
  }
};

inline OnednnPlan make_onednn_plan(const Case& c) {
  using dnnl::algorithm;
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine& eng = onednn_engine();
  const dt type = c.type == f32 ? dt::f32 : dt::bf16;
  const dnnl::memory::desc md({c.rows, c.cols}, type, tag::ab);
  auto mem = [&](const dnnl::memory::desc& d, const void* p) {
    return dnnl::memory(d, eng, const_cast<void*>(p));
  };
  auto binary = [&](algorithm alg, const dnnl::memory::desc& src1, const dnnl::post_ops& po) {
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    return dnnl::binary::primitive_desc(dnnl::binary::desc(alg, md, src1, md), attr, eng);
  };
  auto eltwise = [&](algorithm alg, float alpha) {
    return dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, alg, md, alpha, 0.f), eng);
  };
  const auto& in = c.in_ptrs;
  const auto& out = c.out_ptrs;
  OnednnPlan p;
  switch (c.w) {
  case Workload::chain: {
    dnnl::post_ops po;
    po.append_binary(algorithm::binary_add, md);
    po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    p.add<dnnl::binary>(binary(algorithm::binary_mul, md, po),
                        {{DNNL_ARG_SRC_0, mem(md, in[0])},
                         {DNNL_ARG_SRC_1, mem(md, in[1])},
                         {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mem(md, in[2])},
                         {DNNL_ARG_DST, mem(md, out[0])}});
    break;
  }
  case Workload::bias_sigmoid:
  case Workload::bias_sigmoid_bf16: {
    const dnnl::memory::desc bias_md({1, c.cols}, type, tag::ab);
    dnnl::post_ops po;
    po.append_eltwise(1.f, algorithm::eltwise_linear, bias_scale, 0.f);
    po.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
    p.add<dnnl::binary>(binary(algorithm::binary_add, bias_md, po),
                        {{DNNL_ARG_SRC_0, mem(md, in[0])},
                         {DNNL_ARG_SRC_1, mem(bias_md, in[1])},
                         {DNNL_ARG_DST, mem(md, out[0])}});
    break;
  }
  case Workload::gelu_tanh:
  case Workload::swish: {
    const bool gelu = c.w == Workload::gelu_tanh;
    p.add<dnnl::eltwise_forward>(
        eltwise(gelu ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_swish, gelu ? 0.f : 1.f),
        {{DNNL_ARG_SRC, mem(md, in[0])}, {DNNL_ARG_DST, mem(md, out[0])}});
    break;
  }
  case Workload::two_outputs: {
    p.add<dnnl::binary>(binary(algorithm::binary_add, md, {}), {{DNNL_ARG_SRC_0, mem(md, in[0])},
                                                                {DNNL_ARG_SRC_1, mem(md, in[1])},
                                                                {DNNL_ARG_DST, mem(md, out[0])}});
    p.add<dnnl::binary>(binary(algorithm::binary_mul, md, {}), {{DNNL_ARG_SRC_0, mem(md, out[0])},
                                                                {DNNL_ARG_SRC_1, mem(md, in[2])},
                                                                {DNNL_ARG_DST, mem(md, out[1])}});
    break;
  }
  case Workload::softmax1024:
  case Workload::softmax37:
    p.add<dnnl::softmax_forward>(
        dnnl::softmax_forward::primitive_desc(
            dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng),
        {{DNNL_ARG_SRC, mem(md, in[0])}, {DNNL_ARG_DST, mem(md, out[0])}});
    break;
  }
  return p;
}

/// One plan per thread count (1 and 2), each created under omp_set_num_threads(t).
inline Runner make_onednn(const Case& c, std::string* impl = nullptr) {
  auto plans = std::make_shared<std::vector<OnednnPlan>>();
  const int saved = omp_get_max_threads();
  for (int t : {1, 2}) {
    omp_set_num_threads(t);
    plans->push_back(make_onednn_plan(c));
  }
  omp_set_num_threads(saved);
  if (impl) *impl = plans->front().impl;
  auto stream = std::make_shared<dnnl::stream>(onednn_engine());
  return [plans, stream](int t) {
    const int saved_threads = omp_get_max_threads();
    omp_set_num_threads(t);
    const OnednnPlan& p = (*plans)[std::size_t(t - 1)];
    for (std::size_t k = 0; k < p.prims.size(); ++k) p.prims[k].execute(*stream, p.args[k]);
    stream->wait();
    omp_set_num_threads(saved_threads);
  };
}

} // namespace snippets::bench::peers
