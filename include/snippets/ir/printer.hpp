// SPDX-License-Identifier: Apache-2.0
// snippets/ir/printer.hpp: a stable text dump of a Graph, one node per line, used by golden
// tests and debug output. Nodes appear in id order (ids are stable and edges name them):
//   %2 = Add 'sum'(%0:0, %1:0) -> f32[1,3,?,?]
//   %3 = Clamp 'c'(%2:0) {lo=0, hi=6} -> f32[1,3,?,?]
//   %4 = Result 'out'(%3:0) [skipped]
// Attributes follow the inputs in braces, in the tag's member order, and are left out when an
// op has none; numbers are printed in their shortest exact form (std::to_chars). A Parameter
// shows its layout only when it is not planar; a Constant shows at most 8 values. A Subgraph
// is followed by its body, indented by four spaces per level.
#pragma once

#include <charconv>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include "snippets/ir/graph.hpp"

namespace snippets::ir {

namespace detail {

inline std::string format_number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class Range> std::string format_list(const Range& r, std::size_t limit = SIZE_MAX) {
  std::string s = "[";
  std::size_t i = 0;
  for (const auto& x : r) {
    if (i) s += ',';
    if (i == limit) return s + "...]";
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(x)>>)
      s += format_number(x);
    else
      s += std::to_string(x);
    ++i;
  }
  return s + "]";
}

inline std::string_view format_bool(bool b) { return b ? "true" : "false"; }

/// " {k=v, ...}" for the op's attributes, or "" when it has none.
template <class T> std::string format_attributes(const Op<T>& op) {
  std::ostringstream os;
  std::visit(
      [&](const auto& tag) {
        using Tag = std::decay_t<decltype(tag)>;
        if constexpr (std::is_same_v<Tag, Parameter>) {
          if (!tag.layout.is_planar())
            os << "layout=" << tag.layout.to_string(tag.output.shape.rank());
          if (tag.strided_read) os << (tag.layout.is_planar() ? "" : ", ") << "strided_read=true";
        } else if constexpr (std::is_same_v<Tag, Result>) {
          if (!tag.layout.is_planar())
            os << "layout=" << tag.layout.to_string(tag.layout.order().size());
        } else if constexpr (std::is_same_v<Tag, Constant>) {
          os << "values=" << format_list(tag.values, 8);
        } else if constexpr (std::is_same_v<Tag, Scalar>) {
          os << "value=" << format_number(tag.value);
        } else if constexpr (std::is_same_v<Tag, Clamp>) {
          os << "lo=" << format_number(tag.lo) << ", hi=" << format_number(tag.hi);
        } else if constexpr (std::is_same_v<Tag, Round>) {
          os << "mode="
             << (tag.mode == RoundMode::half_to_even ? "half_to_even" : "half_away_from_zero");
        } else if constexpr (std::is_same_v<Tag, Gelu>) {
          os << "approximation=" << (tag.approximation == GeluApproximation::erf ? "erf" : "tanh");
        } else if constexpr (std::is_same_v<Tag, Exp>) {
          if (tag.nonpositive) os << "nonpositive=true"; // printed only when set
        } else if constexpr (std::is_same_v<Tag, Swish>) {
          os << "beta=" << format_number(tag.beta);
        } else if constexpr (std::is_same_v<Tag, Elu> || std::is_same_v<Tag, LeakyRelu>) {
          os << "alpha=" << format_number(tag.alpha);
        } else if constexpr (std::is_same_v<Tag, PowerStatic>) {
          os << "exponent=" << format_number(tag.exponent);
        } else if constexpr (std::is_same_v<Tag, Convert>) {
          os << "to=" << snippets::to_string(tag.to);
        } else if constexpr (std::is_same_v<Tag, FakeQuantize>) {
          os << "levels=" << tag.levels;
        } else if constexpr (std::is_same_v<Tag, Quantize>) {
          os << "to=" << snippets::to_string(tag.to);
        } else if constexpr (reduction<Tag>) {
          os << "axes=" << format_list(tag.axes) << ", keep_dims=" << format_bool(tag.keep_dims);
          if constexpr (std::is_same_v<Tag, ReduceMax>)
            if (tag.ignore_nan) os << ", ignore_nan=true"; // printed only when set
        } else if constexpr (std::is_same_v<Tag, Softmax>) {
          os << "axis=" << tag.axis;
        } else if constexpr (std::is_same_v<Tag, Transpose>) {
          os << "order=" << format_list(tag.order);
        } else if constexpr (std::is_same_v<Tag, Broadcast>) {
          os << "shape=" << tag.shape.to_string();
        } else if constexpr (std::is_same_v<Tag, Reshape>) {
          os << "shape=" << format_list(tag.shape);
        } else if constexpr (std::is_same_v<Tag, Slice>) {
          os << "axis=" << tag.axis << ", start=" << tag.start << ", length=" << tag.length;
        } else if constexpr (std::is_same_v<Tag, MatMul>) {
          os << "transpose_a=" << format_bool(tag.transpose_a)
             << ", transpose_b=" << format_bool(tag.transpose_b);
          if (tag.a_zero_point != 0) os << ", a_zero_point=" << tag.a_zero_point;
        } else if constexpr (std::is_same_v<Tag, Opaque>) {
          os << "type_name=" << tag.type_name;
        } else if constexpr (std::is_same_v<Tag, Subgraph<T>>) {
          os << "absorbed=[";
          for (std::size_t i = 0; i < tag.absorbed.size(); ++i)
            os << (i ? "," : "") << tag.absorbed[i];
          os << ']';
        } else if constexpr (requires { tag.print_attributes(os); }) {
          tag.print_attributes(os); // an extra op's (extra_ops.hpp)
        } else {
          static_assert(std::is_empty_v<Tag>, "snippets: print the attributes of this op tag");
        }
      },
      op);
  const std::string attrs = os.str();
  return attrs.empty() ? attrs : " {" + attrs + "}";
}

template <class T>
void print_graph(std::ostream& os, const Graph<T>& g, const std::string& indent) {
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node<T>& n = g.node(id);
    os << indent << '%' << id << " = " << n.op_name() << " '" << n.name << "'(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << '%' << n.inputs[i].node << ':' << n.inputs[i].port;
    os << ')' << format_attributes<T>(n.op);
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : " -> ") << n.outputs[i].to_string();
    if (n.skipped_by_plugin) os << " [skipped]";
    os << '\n';
    if (const auto* sg = std::get_if<Subgraph<T>>(&n.op); sg && sg->body)
      print_graph(os, *sg->body, indent + "    ");
  }
}

} // namespace detail

template <class T> std::string to_string(const Graph<T>& g) {
  std::ostringstream os;
  detail::print_graph(os, g, "");
  return os.str();
}

} // namespace snippets::ir
