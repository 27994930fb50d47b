// SPDX-License-Identifier: Apache-2.0
// snippets-make-demo-model: writes the demo model, a transformer block's MLP tail, as ONNX.
//
//   h = gelu_tanh(x @ W1 + b1)      GELU written out in ONNX ops, as exporters emit it:
//                                   0.5 * h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * h^3)))
//   y = (h @ W2 + b2) + x
//
// The weights are initializers with seeded random values; x is the one graph input. With
// --data DIR it also writes DIR/input_0.pb (an input for snippets-run --data).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "snippets/frontend/onnx_tensor.hpp"

namespace {

namespace pb = ::onnx;

const char* usage =
    R"(usage: snippets-make-demo-model OUT.onnx [--tokens N] [--width N] [--hidden N]
                                 [--seed N] [--data DIR]

Writes an ONNX model of a transformer MLP tail: MatMul + bias, a GELU (tanh form) chain of
elementwise ops, MatMul + bias, residual Add. Defaults: 128 tokens, width 128, hidden 512.
--data DIR also writes DIR/input_0.pb, a seeded random input.
)";

void add_tensor(pb::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims,
                std::mt19937& rng, double scale) {
  pb::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::FLOAT);
  std::int64_t n = 1;
  for (auto d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) t->add_float_data(static_cast<float>(scale) * dist(rng));
}

void add_scalar(pb::GraphProto& g, const std::string& name, float v) {
  pb::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::FLOAT);
  t->add_float_data(v);
}

void add_node(pb::GraphProto& g, const std::string& op, std::vector<std::string> in,
              const std::string& out) {
  pb::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
}

void set_value_info(pb::ValueInfoProto* v, const std::string& name, std::int64_t rows,
                    std::int64_t cols) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(pb::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(rows);
  t->mutable_shape()->add_dim()->set_dim_value(cols);
}

} // namespace

int main(int argc, char** argv) {
  std::string out, data;
  std::int64_t tokens = 128, width = 128, hidden = 512;
  unsigned seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&]() -> long long {
      if (i + 1 >= argc) {
        std::cerr << "snippets-make-demo-model: " << a << " needs a value\n";
        std::exit(2);
      }
      return std::atoll(argv[++i]);
    };
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      return 0;
    } else if (a == "--tokens") {
      tokens = number();
    } else if (a == "--width") {
      width = number();
    } else if (a == "--hidden") {
      hidden = number();
    } else if (a == "--seed") {
      seed = static_cast<unsigned>(number());
    } else if (a == "--data") {
      if (i + 1 >= argc) return std::cerr << "--data needs a folder\n", 2;
      data = argv[++i];
    } else if (out.empty() && a[0] != '-') {
      out = a;
    } else {
      std::cerr << "snippets-make-demo-model: unexpected argument " << a << "\n" << usage;
      return 2;
    }
  }
  if (out.empty() || tokens <= 0 || width <= 0 || hidden <= 0) {
    std::cerr << usage;
    return 2;
  }
  std::mt19937 rng(seed);
  pb::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("snippets-make-demo-model");
  m.add_opset_import()->set_version(17);
  pb::GraphProto& g = *m.mutable_graph();
  g.set_name("mlp_tail");
  set_value_info(g.add_input(), "x", tokens, width);
  set_value_info(g.add_output(), "y", tokens, width);
  add_tensor(g, "W1", {width, hidden}, rng, 1.0 / std::sqrt(double(width)));
  add_tensor(g, "b1", {hidden}, rng, 0.1);
  add_tensor(g, "W2", {hidden, width}, rng, 1.0 / std::sqrt(double(hidden)));
  add_tensor(g, "b2", {width}, rng, 0.1);
  add_scalar(g, "three", 3.0f);
  add_scalar(g, "c_cubic", 0.044715f);
  add_scalar(g, "c_sqrt_2_pi", static_cast<float>(std::sqrt(2.0 / M_PI)));
  add_scalar(g, "one", 1.0f);
  add_scalar(g, "half", 0.5f);
  add_node(g, "MatMul", {"x", "W1"}, "fc1");
  add_node(g, "Add", {"fc1", "b1"}, "h");
  add_node(g, "Pow", {"h", "three"}, "h_cubed");
  add_node(g, "Mul", {"h_cubed", "c_cubic"}, "h_cubed_scaled");
  add_node(g, "Add", {"h", "h_cubed_scaled"}, "inner");
  add_node(g, "Mul", {"inner", "c_sqrt_2_pi"}, "inner_scaled");
  add_node(g, "Tanh", {"inner_scaled"}, "t");
  add_node(g, "Add", {"t", "one"}, "one_plus_t");
  add_node(g, "Mul", {"h", "one_plus_t"}, "h_gated");
  add_node(g, "Mul", {"h_gated", "half"}, "gelu");
  add_node(g, "MatMul", {"gelu", "W2"}, "fc2");
  add_node(g, "Add", {"fc2", "b2"}, "proj");
  add_node(g, "Add", {"proj", "x"}, "y");

  if (const auto dir = std::filesystem::path(out).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir);
  std::ofstream file(out, std::ios::binary);
  if (!file || !m.SerializeToOstream(&file)) {
    std::cerr << "snippets-make-demo-model: cannot write " << out << '\n';
    return 2;
  }
  std::cout << "wrote " << out << " (x [" << tokens << "," << width << "] -> y, hidden " << hidden
            << ")\n";
  if (!data.empty()) {
    std::filesystem::create_directories(data);
    std::vector<double> v(static_cast<std::size_t>(tokens * width));
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (double& e : v) e = dist(rng);
    const auto path = std::filesystem::path(data) / "input_0.pb";
    snippets::onnx::write_tensor(
        path,
        snippets::reference::Tensor::from_values(snippets::ElementType::f32, {tokens, width}, v),
        "x");
    std::cout << "wrote " << path.string() << '\n';
  }
  return 0;
}
