// SPDX-License-Identifier: Apache-2.0
// snippets/passes/convert_to_linear_ir.hpp: the seed's "Convert IR" step, body Graph -> LIR.
//
// Contract:
//  - @pre the body has at least one Result; every Result has the shape of the scheduling
//    domain (the NUMPY broadcast of all outputs and reduction inputs; of the outputs only
//    in a body with a MatMul, whose Softmax works on its rows), or, in a body with
//    reductions, that shape with 1 in the reduced axes (a per-row value; every reduction
//    reduces the same axes counted from the end, passes/decompose_softmax.hpp: RowForm, else
//    [snippets.compile.reduce_axis]; `kept_axes` holds how many trailing axes they keep).
//    Shapes may have dynamic dimensions: then the LIR is marked `dynamic` and its domain holds
//    `dynamic` where the extent is unknown;
//  - @post Parameters come first (data_index = parameter position), then Scalars, then the
//    computation in topological order, then Results (data_index = num_inputs + position);
//    every port shape is right-aligned to the domain rank with leading 1s; a Parameter read
//    through its layout (`strided_read`) has that layout, lifted alike, as its port's memory
//    order (PortDescriptor::layout), and so has a Result with a layout on its input port;
//  - @post a Parameter that only foldable Slices read (slice_reads.hpp) becomes one Parameter
//    expression per Slice, all with that Parameter's data_index: the Slice's shape, the input's
//    extents as `memory` and the part's first element as `offset` (ir::PortDescriptor);
//  - @post `arg_types` holds each Parameter's and Result's element type. Kernels hold every
//    value as an f32, so a Convert to f32 is the identity there and is not lowered, and a
//    Convert whose only users are Results is left to their Stores, which convert the same way.
// It runs after the data-flow passes (default_pipelines.hpp: DefaultDataFlow), so constants
// are Scalars by now; a Constant left over holds different values and cannot be in a kernel,
// unless it is a MatMul's weights.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "snippets/ir/graph.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/convert_constants_to_scalars.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/slice_reads.hpp"

namespace snippets::passes {

namespace detail {
inline std::vector<Dim> align_rank(const Shape& s, std::size_t rank) {
  std::vector<Dim> d(rank - s.rank(), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}
/// A Convert the LIR does without: to f32 (values are f32 in registers), or to the type of
/// the Results that are its only users (their Stores convert as Convert does, a boolean Store
/// too: value != 0, NaN included).
template <class T> bool folds_into_memory(const ir::Graph<T>& body, const ir::Node<T>& n) {
  const ElementType to = std::get<ir::Convert>(n.op).to;
  if (to == ElementType::f32) return true;
  if (n.users.empty() || n.users[0].empty()) return false;
  for (const ir::Use& u : n.users[0])
    if (!ir::is<ir::Result>(body.node(u.node).op)) return false;
  return true;
}

} // namespace detail

template <class T> ir::LinearIR<T> convert_to_linear_ir(const ir::Graph<T>& body) {
  using ir::Expression;
  ir::LinearIR<T> lir;
  if (body.results().empty())
    raise("snippets.compile.no_outputs", "the subgraph body has no Result; add g.result(...)");
  // the domain: every output, and every reduction's input (a reduced output is [..., 1])
  Shape domain;
  for (ir::NodeId r : body.results())
    domain = broadcast(domain, body.type(body.node(r).inputs[0]).shape);
  bool rows = false; // the kernel walks rows: per-row outputs are stored once per row
  const bool matmul = passes::has_matmul(body); // a Softmax around MatMuls: their rows
  passes::RowForm form; // the axes a row holds (one form for every reduction)
  auto describe = [](const passes::RowForm& f) {
    const std::string k = std::to_string(f.reduced);
    return f.kept == 0 ? "last " + k + " axes"
                       : k + " axes before the last " + std::to_string(f.kept);
  };
  for (ir::NodeId id = 0; id < body.size() && !matmul; ++id)
    if (const auto& n = body.node(id); ir::is_row_reduction(n.op)) {
      domain = broadcast(domain, body.type(n.inputs[0]).shape);
      rows = true;
      const passes::RowForm f = passes::row_form(body, n);
      if (form.reduced != 0 && f != form)
        raise("snippets.compile.reduce_axis",
              n.describe() + " reduces over the " + describe(f) +
                  ", another reduction of the subgraph over the " + describe(form) +
                  "; a kernel walks one kind of row: split the subgraph");
      form = f;
    }
  for (ir::NodeId id = 0; id < body.size() && (form.reduced > 1 || form.kept > 0); ++id)
    if (const auto& n = body.node(id); ir::is_row_reduction(n.op)) {
      const Shape& s = body.type(n.inputs[0]).shape;
      for (std::size_t j = form.kept + 1; j <= form.kept + form.reduced; ++j)
        if (j > s.rank() || s[s.rank() - j] != domain[domain.rank() - j])
          raise("snippets.compile.reduce_axis",
                n.describe() + " reduces " + s.to_string() + ", which the kernel's domain " +
                    domain.to_string() +
                    " broadcasts along the reduced axes; reduce it in a subgraph of its own");
    }
  lir.kept_axes = form.kept;
  for (ir::NodeId r : body.results()) {
    const Shape& s = body.type(body.node(r).inputs[0]).shape;
    std::vector<Dim> reduced(domain.begin(), domain.end());
    for (std::int64_t a : form.axes())
      if (std::size_t(-a) <= reduced.size()) reduced[reduced.size() - std::size_t(-a)] = 1;
    if (s != domain && (!rows || s != Shape(reduced)))
      raise("snippets.compile.output_shape",
            "output '" + body.node(r).name + "' has shape " + s.to_string() +
                " but the kernel computes " + domain.to_string() +
                "; every output of a subgraph must have that shape (or, in a subgraph with "
                "reductions, that shape reduced over the reduced axes)");
  }
  // an unused input (or dead branch) may have a higher rank than the outputs: leading 1s make room
  std::size_t rank = std::max<std::size_t>(domain.rank(), 1);
  for (ir::NodeId id = 0; id < body.size(); ++id)
    for (const auto& t : body.node(id).outputs) rank = std::max(rank, t.shape.rank());
  lir.domain = detail::align_rank(domain, rank);
  lir.dynamic = !domain.is_static();

  std::map<std::pair<ir::NodeId, std::uint32_t>, ir::PortConnector<T>*> value_of;
  auto add = [&](const ir::Node<T>& n, ir::LirOp<T> op, std::vector<ir::PortConnector<T>*> in,
                 std::size_t data_index) -> Expression<T>& {
    Expression<T>& e = lir.insert_node(lir.end(), std::move(op), in, n.outputs.size(), {}, n.name);
    e.data_index = data_index;
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      e.out_desc(i).shape = detail::align_rank(n.outputs[i].shape, rank);
      value_of[{n.id, static_cast<std::uint32_t>(i)}] = &e.output(i);
    }
    return e;
  };

  const auto& params = body.parameters();
  std::set<ir::NodeId> folded; // Slices read as parts of their input, and Converts before them
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& n = body.node(params[i]);
    lir.dynamic = lir.dynamic || !n.outputs[0].shape.is_static();
    lir.arg_types.push_back(n.outputs[0].type);
    std::vector<const ir::Node<T>*> converts;
    if (const auto parts = slice_reads(body, n, &converts); !parts.empty()) {
      for (const ir::Node<T>* c : converts) folded.insert(c->id);
      for (const ir::Node<T>* part : parts) {
        Expression<T>& e = add(*part, std::get<ir::Parameter>(n.op), {}, i);
        e.name = n.name;
        e.out_desc(0).memory = detail::align_rank(n.outputs[0].shape, rank);
        e.out_desc(0).offset = slice_offset(body, *part);
        folded.insert(part->id);
      }
      continue;
    }
    Expression<T>& e =
        std::visit([&](const auto& tag) -> Expression<T>& { return add(n, tag, {}, i); }, n.op);
    const auto& param = std::get<ir::Parameter>(n.op);
    if (param.strided_read && !param.layout.is_planar()) {
      const std::size_t extra = rank - n.outputs[0].shape.rank();
      auto& order = e.out_desc(0).layout;
      for (std::size_t a = 0; a < extra; ++a) order.push_back(a);
      for (std::size_t a : param.layout.order()) order.push_back(a + extra);
    }
  }
  lir.num_inputs = params.size();
  lir.num_outputs = body.results().size();
  for (ir::NodeId r : body.results())
    lir.arg_types.push_back(body.type(body.node(r).inputs[0]).type);

  const auto order = body.topological_order();
  // Scalars first: they are loop invariant and live in registers for the whole kernel.
  for (ir::NodeId id : order) {
    const auto& n = body.node(id);
    if (const auto* c = std::get_if<ir::Constant>(&n.op)) {
      if (!feeds_matmul(body, n))
        raise("snippets.compile.tensor_constant",
              "Constant '" + n.name + "' " +
                  (detail::uniform_value<T>(n.op)
                       ? "gives an output its shape " + c->output.shape.to_string() +
                             " (kernels hold constants as scalars, which do not broadcast)"
                       : std::string("holds different values")) +
                  "; pass it as an input instead");
      add(n, *c, {}, 0); // MatMul weights, packed at compile time (lower_brgemm.hpp)
    }
    if (const auto* s = std::get_if<ir::Scalar>(&n.op)) add(n, *s, {}, 0);
  }
  std::map<ir::NodeId, std::size_t> result_index; // kernel outputs follow Graph::results()
  for (std::size_t i = 0; i < body.results().size(); ++i) result_index[body.results()[i]] = i;
  for (ir::NodeId id : order) {
    const auto& n = body.node(id);
    if (ir::is<ir::Parameter>(n.op) || ir::is<ir::Scalar>(n.op) || ir::is<ir::Constant>(n.op) ||
        folded.count(id))
      continue;
    std::vector<ir::PortConnector<T>*> in;
    for (const ir::Output& o : n.inputs) in.push_back(value_of.at({o.node, o.port}));
    if (const auto* c = std::get_if<ir::Convert>(&n.op); c && detail::folds_into_memory(body, n)) {
      value_of[{n.id, 0}] = in[0];
      continue;
    }
    if (const auto* r = std::get_if<ir::Result>(&n.op)) {
      Expression<T>& e = add(n, *r, in, lir.num_inputs + result_index.at(id));
      if (!r->layout.is_planar()) { // a transposed write: the output buffer's memory order
        const std::size_t extra = rank - r->layout.order().size();
        auto& order = e.in_desc(0).layout;
        for (std::size_t a = 0; a < extra; ++a) order.push_back(a);
        for (std::size_t a : r->layout.order()) order.push_back(a + extra);
      }
      continue;
    }
    std::visit([&](const auto& tag) { add(n, tag, in, 0); }, n.op);
  }
  // Results go last so that their stores can sit inside the loops before them.
  std::vector<Expression<T>*> results;
  for (auto& e : lir)
    if (std::holds_alternative<ir::Result>(e->op)) results.push_back(e.get());
  for (auto* r : results) lir.move(*r, lir.end());
  return lir;
}

} // namespace snippets::passes
