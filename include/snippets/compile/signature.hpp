// SPDX-License-Identifier: Apache-2.0
// snippets/compile/signature.hpp: the KernelSignature compile() gives a kernel: its buffers
// (shapes, physical for inputs read through a layout), which inputs an output may overwrite,
// the domain, strides of the parallel loop, scratch and, for a dynamic kernel, its layout.
#pragma once

#include <numeric>
#include <vector>

#include "snippets/ir/graph.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/lower_brgemm.hpp"
#include "snippets/runtime/compiled_kernel.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets {

namespace detail {

/// Blocks per unit of a kernel of columns whose threads split its blocks of W columns (the
/// batch dimension dropped: passes/tile_columns.hpp). Each output row of H*W columns (a channel)
/// is then cut where one thread's blocks end, and two threads writing one cache line trade it
/// back and forth, once per row. So a unit keeps each thread's part of every row whole lines
/// where the rows start on lines, else at least 1 KiB of the row (at most one line in 16
/// shared): [1, 768, 7, 7] (7 blocks of 7 columns, rows of 196 bytes) stays on one thread.
/// 1 when the batch is the parallel dimension.
template <class T> std::int64_t column_chunk_unit(const ir::LinearIR<T>& lir) {
  if (lir.domain.size() != lir.row_dims + 1) return 1; // dim 0 is the batch
  const Dim blocks = lir.domain[0], width = lir.domain.back();
  std::int64_t unit = 1;
  for (std::size_t a = lir.num_inputs; a < lir.num_inputs + lir.num_outputs; ++a) {
    const auto block_bytes = static_cast<std::int64_t>(width * Dim(size_of(lir.arg_types.at(a))));
    if (block_bytes * blocks % 64 == 0) { // the fewest blocks that make whole lines
      unit = std::max(unit, 64 / std::gcd(block_bytes, std::int64_t{64}));
    } else { // as many units of 1 KiB as fit, evenly (no short last unit)
      const std::int64_t units = std::max<std::int64_t>(1, blocks * block_bytes / 1024);
      unit = std::max(unit, (blocks + units - 1) / units);
    }
  }
  return unit;
}

/// A static body whose outputs are all empty (an empty batch, a product without rows or
/// columns) needs no code: compile() gives it a kernel that checks its buffers and returns.
template <class T> bool writes_nothing(const ir::Graph<T>& body) {
  if (body.results().empty() || has_dynamic_shapes(body)) return false;
  for (ir::NodeId r : body.results())
    if (body.type(body.node(r).inputs[0]).shape.element_count() != 0) return false;
  return true;
}

/// The signature of writes_nothing()'s kernel: the buffers in memory order, no work.
template <class T>
KernelSignature empty_signature(const ir::Graph<T>& body, typename T::Variant isa) {
  KernelSignature sig;
  for (ir::NodeId p : body.parameters()) {
    const auto& param = std::get<ir::Parameter>(body.node(p).op);
    const Shape& s = param.output.shape;
    sig.inputs.push_back(
        {param.output.type, param.layout.is_planar() ? s : param.layout.physical_shape(s)});
  }
  for (ir::NodeId r : body.results()) {
    ir::TensorType t = body.type(body.node(r).inputs[0]);
    if (const Layout& l = std::get<ir::Result>(body.node(r).op).layout; !l.is_planar())
      t.shape = l.physical_shape(t.shape);
    sig.outputs.push_back(t);
  }
  sig.domain = {0};
  sig.outer_stride_bytes.assign(sig.inputs.size() + sig.outputs.size(), 0);
  sig.in_place.assign(sig.inputs.size(), false);
  sig.isa = std::string(T::variant_name(isa));
  sig.vector_bytes = T::registers(isa).lanes * 4;
  return sig;
}

/// Per input: whether an output may share its buffer (KernelSignature::in_place). Yes when every
/// expression works element by element (no product, reduction, row buffer or Softmax over rows),
/// every output is written in planar order and the input is read in planar order; run() then
/// requires the same shape (not broadcast) and element size.
template <class T> std::vector<bool> in_place_inputs(ir::LinearIR<T>& lir) {
  std::vector<bool> in_place(lir.num_inputs, false);
  for (auto& e : lir) {
    const bool per_element = std::visit(
        [](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          return !(std::is_same_v<Tag, ir::Brgemm> || std::is_same_v<Tag, ir::BrgemmCopyB> ||
                   std::is_same_v<Tag, ir::SoftmaxRows> || std::is_same_v<Tag, ir::ReduceInit> ||
                   std::is_same_v<Tag, ir::Buffer>);
        },
        e->op);
    const bool transposed_store =
        std::holds_alternative<ir::Result>(e->op) && !e->in_desc(0).layout.empty();
    if (!per_element || transposed_store) return std::vector<bool>(lir.num_inputs, false);
    if (std::holds_alternative<ir::Parameter>(e->op))
      in_place.at(e->data_index) = e->out_desc(0).layout.empty() && e->out_desc(0).memory.empty();
  }
  return in_place;
}

/// Per output of `canonical`, the inputs (bit i) it reads along the innermost axis: through
/// any op but a reduction (whose result has one element per row).
template <class T> std::vector<std::uint32_t> row_inputs(const ir::Graph<T>& canonical) {
  std::vector<std::uint32_t> along(canonical.size(), 0);
  for (std::size_t i = 0; i < canonical.parameters().size(); ++i)
    along[canonical.parameters()[i]] = 1u << i;
  for (ir::NodeId id = 0; id < canonical.size(); ++id) {
    const ir::Node<T>& n = canonical.node(id);
    if (ir::is_row_reduction(n.op)) continue;
    for (const ir::Output& in : n.inputs) along[id] |= along[in.node];
  }
  std::vector<std::uint32_t> out;
  for (ir::NodeId r : canonical.results()) out.push_back(along[r]);
  return out;
}

/// What the executor needs to know about the lowered kernel. Inputs and outputs keep the
/// body's shapes (rank alignment does not change memory) unless an input has a non-planar
/// layout the body takes: then the buffers have the physical shapes of the canonical body.
/// An input read through its layout (`strided_read`) has its layout's physical shape; one
/// whose Transpose the data flow folded into it is still planar in `body`: the user's shape.
template <class T>
KernelSignature describe(const ir::Graph<T>& body, const ir::Graph<T>& canonical,
                         ir::LinearIR<T>& lir, typename T::Variant isa) {
  KernelSignature sig;
  bool physical = false;
  for (ir::NodeId p : body.parameters()) {
    const auto& param = std::get<ir::Parameter>(body.node(p).op);
    physical = physical || (!param.layout.is_planar() && !param.strided_read);
  }
  for (std::size_t i = 0; i < body.parameters().size(); ++i) {
    const auto& p = body.node(body.parameters()[i]);
    const auto& param = std::get<ir::Parameter>(p.op);
    if (param.layout.is_planar())
      sig.inputs.push_back(p.outputs[0]);
    else if (param.strided_read)
      sig.inputs.push_back({param.output.type, param.layout.physical_shape(param.output.shape)});
    else
      sig.inputs.push_back(canonical.node(canonical.parameters()[i]).outputs[0]);
  }
  const ir::Graph<T>& out = physical ? canonical : body;
  for (ir::NodeId r : out.results()) {
    ir::TensorType t = out.type(out.node(r).inputs[0]);
    if (const Layout& l = std::get<ir::Result>(out.node(r).op).layout; !l.is_planar())
      t.shape = l.physical_shape(t.shape); // a Result written transposed
    sig.outputs.push_back(t);
  }
  sig.in_place = in_place_inputs(lir);
  sig.domain = lir.domain;
  sig.buffer_pointers = lir.buffer_pointers;
  sig.scratch_bytes = lir.scratch_bytes;
  sig.isa = std::string(T::variant_name(isa));
  sig.vector_bytes = T::registers(isa).lanes * 4;
  for (const auto& l : lir.loops().loops()) // a flat domain splits in main-loop steps
    if (l.runtime_work_amount && lir.domain.size() == 1) sig.chunk_unit = l.increment;
  const std::size_t n_args = lir.num_inputs + lir.num_outputs;
  sig.outer_stride_bytes.resize(n_args);
  if (passes::has_brgemm(lir)) { // the parallel loop's ports say how far a chunk moves
    for (const auto& l : lir.loops().loops()) {
      if (!l.runtime_work_amount || l.is_tail) continue;
      // dim 1: the M loop of a kernel with one batch dim, whose calls may take blocks of rows
      const bool rows = l.dim == 1;
      if (rows) {
        sig.inner_unit = l.increment;
        sig.inner_stride_bytes.assign(n_args, 0);
      } else {
        sig.chunk_unit = l.increment;
      }
      auto& strides = rows ? sig.inner_stride_bytes : sig.outer_stride_bytes;
      for (const auto& p : l.ports)
        if (p.data_index < n_args)
          strides[p.data_index] = p.ptr_increment / l.increment * p.element_size;
    }
    if (lir.column_unit > 0) { // no batch dims: calls may take a range of N's panels
      sig.inner_unit = lir.column_unit;
      sig.inner_stride_bytes = lir.column_stride_bytes;
      sig.inner_shared = lir.column_shared;
      sig.inner_columns = true;
    }
    std::int64_t fmas = 0; // per output element: each product's K x N over the output's N
    for (auto& e : lir)
      if (const auto* b = std::get_if<ir::Brgemm>(&e->op);
          b && !e->loop_ids.empty() && !lir.loops().at(e->loop_ids.back()).is_tail)
        fmas += b->shape.k * b->shape.n / std::max<Dim>(lir.domain.back(), 1);
    sig.element_cost = std::max<std::int64_t>(1, fmas / T::registers(isa).lanes);
    return sig;
  }
  std::vector<std::vector<Dim>> shapes(n_args);
  for (auto& e : lir) {
    if (!passes::holds_io(*e)) continue;
    const bool in = std::holds_alternative<ir::Parameter>(e->op);
    const auto& desc = in ? e->out_desc(0) : e->in_desc(0);
    const auto bytes = static_cast<std::int64_t>(size_of(lir.arg_types.at(e->data_index)));
    if (lir.dynamic)
      shapes[e->data_index] = desc.shape;
    else
      sig.outer_stride_bytes[e->data_index] = passes::stride_along(desc, 0) * bytes;
  }
  if (!lir.dynamic) {
    if (lir.columns) sig.chunk_unit = column_chunk_unit(lir);
    return sig;
  }
  DynamicLayout dyn;
  dyn.args = std::move(shapes);
  dyn.inputs = lir.num_inputs;
  dyn.lanes = T::registers(isa).lanes;
  for (std::size_t a = 0; a < n_args; ++a)
    dyn.element_bytes.push_back(static_cast<std::int64_t>(size_of(lir.arg_types.at(a))));
  for (const auto& t : sig.inputs) dyn.own_rank.push_back(t.shape.rank());
  for (const auto& t : sig.outputs) dyn.own_rank.push_back(t.shape.rank());
  for (const auto& l : lir.loops().loops()) // the main loop's step
    if (l.dim + 1 == lir.domain.size() && !l.is_tail) dyn.step = l.increment;
  for (auto& e : lir) dyn.rows = dyn.rows || std::holds_alternative<ir::HorizonReduce>(e->op);
  if (dyn.rows) dyn.row_inputs = row_inputs(canonical);
  dyn.buffer_rows = lir.buffer_rows;
  dyn.scratch_rows = lir.scratch_rows;
  sig.dynamic = std::move(dyn);
  return sig;
}

} // namespace detail

} // namespace snippets
