// SPDX-License-Identifier: Apache-2.0
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
// has one destination.
// Softmax: blocks of rows (at most 32 KiB, so a block stays in L1 across the passes) of a
// row-major [rows, C] view, three assignments: y = x.colwise() - x.rowwise().maxCoeff(); exp()
// of the block as one flat array; y.colwise() *= y.rowwise().sum().inverse(). Eigen 3.4 does
// not vectorise the 2-D broadcast expression (one expression, (x.colwise() - max).exp(), was
// 3.5x slower with C = 37 and 10x with C = 1024 in L2, side test), and one 1-D expression per
// row leaves a scalar tail (5 of 37) on std::exp (2.5x slower with C = 37).
// bf16 (Eigen::bfloat16 views): Eigen 3.4 does not vectorise casts
// (functor_traits<scalar_cast_op>::PacketAccess is false), and a cast inside the bias
// expression makes the whole expression scalar (about 3x slower, side test). So each row is cast
// into an f32 row, the logistic runs vectorised on it, and the result is cast back to bf16
// (round to nearest even); the casts stay scalar.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <algorithm>

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
  const std::size_t rows = std::size_t(c.rows), C = std::size_t(c.cols);
  // for the f32 elementwise workloads a share starts at a multiple of C = 256 floats, so
  // every view stays 64-byte aligned
  auto in = [cp, C](std::size_t k, std::size_t r0, std::size_t nr) {
    return In(cp->input(k) + r0 * C, Eigen::Index(nr * C));
  };
  auto out = [cp, C](std::size_t k, std::size_t r0, std::size_t nr) {
    return Out(cp->output(k) + r0 * C, Eigen::Index(nr * C));
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
        const Eigen::Map<const Eigen::ArrayXf> bias(cp->input(1), Eigen::Index(C));
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
  case Workload::softmax1024:
  case Workload::softmax37:
    return [=](int t) {
      using Rows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const std::size_t block = std::max<std::size_t>(1, 8192 / C); // rows of <= 32 KiB
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        for (std::size_t b = r0; b < r0 + nr; b += block) {
          const auto h = Eigen::Index(std::min(block, r0 + nr - b)), w = Eigen::Index(C);
          const Eigen::Map<const Rows> x(cp->input(0) + b * C, h, w);
          Eigen::Map<Rows> y(cp->output(0) + b * C, h, w);
          y = x.colwise() - x.rowwise().maxCoeff();
          Eigen::Map<Eigen::ArrayXf> flat(y.data(), h * w);
          flat = flat.exp();
          y.colwise() *= y.rowwise().sum().inverse();
        }
      });
    };
  case Workload::bias_sigmoid_bf16:
    return [=](int t) {
      using B = Eigen::Array<Eigen::bfloat16, Eigen::Dynamic, 1>;
      for_each_share(rows, t, [&](std::size_t r0, std::size_t nr) {
        const auto w = Eigen::Index(C);
        const Eigen::ArrayXf bias =
            Eigen::Map<const B>(cp->input<Eigen::bfloat16>(1), w).cast<float>();
        Eigen::ArrayXf v(w);
        for (std::size_t r = r0; r < r0 + nr; ++r) {
          v = Eigen::Map<const B>(cp->input<Eigen::bfloat16>(0) + r * C, w).cast<float>();
          v = ((v + bias) * bias_scale).logistic();
          Eigen::Map<B>(cp->output<Eigen::bfloat16>(0) + r * C, w) = v.cast<Eigen::bfloat16>();
        }
      });
    };
  }
  return {};
}

} // namespace snippets::bench::peers
