// bench/peers_eigen.hpp: Eigen 3 expression templates as a peer.
//
// Each workload is one Eigen expression on Eigen::Map views of the case's buffers (Array
// semantics, elementwise), which Eigen fuses into one vectorised loop (AVX-512 packets under
// -march=native). Eigen's arrays do not run in parallel by themselves, so each thread of an
// `omp parallel num_threads(t)` region evaluates the expression on its contiguous share of
// the rows. Activations use Eigen's own vectorised functions: tanh() (a rational
// approximation), logistic() (a rational approximation, exp() below -9) and exp(). The bias
// workload is one expression per row: the 2-D form ((x.colwise() + bias) * s).logistic() on a
// [C, rows] view is not vectorised by Eigen 3.4 (8x slower in L2). The two-output workload is two
// assignments per thread (y1 = a + b, then y2 = y1 * c, which reads y1 back): an Eigen expression
// has one destination. Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#define EIGEN_DONT_PARALLELIZE // the threads are ours (OpenMP), not Eigen's
#include <Eigen/Core>

#include "peers_case.hpp"

namespace snippets::bench::peers {

/// Calls f(first_row, row_count) once per thread, rows split into contiguous shares.
template <class F> void for_each_share(std::size_t rows, int t, F f) {
#pragma omp parallel num_threads(t)
  {
    const std::size_t id = std::size_t(omp_get_thread_num()),
                      nth = std::size_t(omp_get_num_threads());
    const std::size_t lo = rows * id / nth, hi = rows * (id + 1) / nth;
    if (hi > lo) f(lo, hi - lo);
  }
}

inline Runner make_eigen(const Case& c) {
  using In = Eigen::Map<const Eigen::ArrayXf, Eigen::Aligned64>;
  using Out = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;
  const Case* cp = &c;
  const std::size_t rows = std::size_t(c.rows), C = std::size_t(channels);
  // a share starts at a multiple of C = 256 floats, so every view stays 64-byte aligned
  auto in = [cp, C](std::size_t k, std::size_t r0, std::size_t nr) {
    return In(cp->in_ptrs[k] + r0 * C, Eigen::Index(nr * C));
  };
  auto out = [cp, C](std::size_t k, std::size_t r0, std::size_t nr) {
    return Out(cp->out_ptrs[k] + r0 * C, Eigen::Index(nr * C));
  };
  switch (c.w) {
  case Workload::chain:
    return [=](int t) {
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        out(0, r0, nr) = (in(0, r0, nr) * in(1, r0, nr) + in(2, r0, nr)).max(0.0f);
      });
    };
  case Workload::bias_sigmoid:
    return [=](int t) {
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        const Eigen::Map<const Eigen::ArrayXf> bias(cp->in_ptrs[1], Eigen::Index(C));
        for (std::size_t r = r0; r < r0 + nr; ++r)
          out(0, r, 1) = ((in(0, r, 1) + bias) * bias_scale).logistic();
      });
    };
  case Workload::gelu_tanh:
    return [=](int t) {
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        const In x = in(0, r0, nr);
        out(0, r0, nr) = 0.5f * x * (1.0f + (gelu_k * (x + gelu_c * x.cube())).tanh());
      });
    };
  case Workload::swish:
    return [=](int t) {
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        const In x = in(0, r0, nr);
        out(0, r0, nr) = x * x.logistic();
      });
    };
  case Workload::two_outputs:
    return [=](int t) {
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        Out y1 = out(0, r0, nr);
        y1 = in(0, r0, nr) + in(1, r0, nr);
        out(1, r0, nr) = y1 * in(2, r0, nr);
      });
    };
  }
  return {};
}

} // namespace snippets::bench::peers
