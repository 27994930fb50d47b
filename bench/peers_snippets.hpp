// bench/peers_snippets.hpp: snippets itself as a peer, fused and op by op.
//
//  - make_fused: the workload compiled once into one JIT kernel (best ISA of the host), timed
//    through run_unchecked;
//  - OpByOp: bench_util.hpp's Unfused (one JIT kernel per op, intermediates in memory) with the
//    graph's Results written into the caller's output buffers, so that the correctness gate
//    can read them (Unfused keeps every op's output in a private temporary). Gelu and Swish
//    run in their decomposed form (Tanh, Multiply, Add, ... / Sigmoid, Multiply), as
//    bench_math's unfused column does; the dedicated op alone would be one kernel.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline Runner make_fused(const Case& c, std::shared_ptr<CompiledKernel>* keep = nullptr) {
  auto k = std::make_shared<CompiledKernel>(compile(build_graph(c.w, c.rows)));
  if (keep) *keep = k;
  const Case* cp = &c;
  return [k, cp](int t) {
    k->run_unchecked(reinterpret_cast<const void* const*>(cp->in_ptrs.data()),
                     reinterpret_cast<void* const*>(cp->out_ptrs.data()), {.threads = t});
  };
}

/// A graph run one op at a time; a Result's producer writes straight into the output buffer.
class OpByOp {
public:
  explicit OpByOp(const G& whole) {
    std::map<ir::NodeId, Arg> arg_of;
    const auto& params = whole.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) arg_of[params[k]] = {Arg::input, k};
    const auto& results = whole.results();
    for (std::size_t r = 0; r < results.size(); ++r)
      arg_of[whole.node(results[r]).inputs[0].node] = {Arg::output, r};
    for (ir::NodeId id : whole.topological_order()) {
      const auto& node = whole.node(id);
      if (ir::is<ir::Parameter>(node.op) || ir::is<ir::Result>(node.op) ||
          ir::is<ir::Scalar>(node.op))
        continue;
      G one;
      std::vector<ir::Value> ins;
      Step step;
      for (const ir::Output& o : node.inputs) {
        const auto& src = whole.node(o.node);
        if (const auto* s = std::get_if<ir::Scalar>(&src.op)) {
          ins.push_back(one.scalar(f32, s->value));
        } else {
          ins.push_back(one.parameter(f32, whole.type(o).shape));
          step.args.push_back(arg_of.at(o.node));
        }
      }
      one.result(one.make(node.op, ins)[0]);
      step.kernel = std::make_unique<CompiledKernel>(compile(one));
      if (!arg_of.contains(id)) {
        temps_.push_back(std::make_unique<Buffer>(
            static_cast<std::size_t>(node.outputs[0].shape.element_count())));
        arg_of[id] = {Arg::temp, temps_.size() - 1};
      }
      step.args.push_back(arg_of.at(id));
      steps_.push_back(std::move(step));
    }
  }

  void run(const std::vector<const float*>& in, const std::vector<float*>& out, int t) const {
    for (const Step& s : steps_) {
      const void* ins[x64::max_kernel_args];
      for (std::size_t a = 0; a + 1 < s.args.size(); ++a) ins[a] = pointer(s.args[a], in, out);
      void* outs[] = {const_cast<void*>(pointer(s.args.back(), in, out))};
      s.kernel->run_unchecked(ins, outs, {.threads = t});
    }
  }
  std::size_t kernel_count() const { return steps_.size(); }

private:
  struct Arg {
    enum Kind { input, output, temp } kind;
    std::size_t index;
  };
  struct Step {
    std::unique_ptr<CompiledKernel> kernel;
    std::vector<Arg> args; // inputs..., output
  };
  const void* pointer(Arg a, const std::vector<const float*>& in,
                      const std::vector<float*>& out) const {
    switch (a.kind) {
    case Arg::input: return in[a.index];
    case Arg::output: return out[a.index];
    case Arg::temp: break;
    }
    return temps_[a.index]->p;
  }
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<Buffer>> temps_;
};

inline Runner make_unfused(const Case& c, std::size_t* kernels = nullptr) {
  auto u = std::make_shared<OpByOp>(build_graph(c.w, c.rows, /*decomposed=*/true));
  if (kernels) *kernels = u->kernel_count();
  const Case* cp = &c;
  return [u, cp](int t) { u->run(cp->in_ptrs, cp->out_ptrs, t); };
}

} // namespace snippets::bench::peers
