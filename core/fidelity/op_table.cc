#include "core/fidelity/op_table.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/fidelity/interpolation.h"

namespace servesim {

const OpGrid* OpTable::find(const std::vector<std::string>& key) const {
  for (const OpGrid& g : grids)
    if (g.key == key) return &g;
  return nullptr;
}

std::string key_int(std::int64_t v) { return std::to_string(v); }

OpGrid drop_grid_lines(const OpGrid& g, std::size_t axis, const std::vector<bool>& held) {
  OpGrid r;
  r.key = g.key;
  r.kernel = g.kernel;
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < g.axes[axis].size(); ++i)
    if (i >= held.size() || !held[i]) keep.push_back(i);
  r.axes = g.axes;
  r.log_axes = g.log_axes;
  r.axes[axis].clear();
  r.log_axes[axis].clear();
  for (std::size_t i : keep) {
    r.axes[axis].push_back(g.axes[axis][i]);
    r.log_axes[axis].push_back(g.log_axes[axis][i]);
  }
  r.strides.assign(r.axes.size(), 1);
  for (std::size_t a = r.axes.size(); a-- > 1;) r.strides[a - 1] = r.strides[a] * r.axes[a].size();
  std::size_t cells = 1;
  for (const auto& a : r.axes) cells *= a.size();
  r.values.resize(cells);
  r.log_values.resize(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    std::size_t rem = c, old = 0;
    for (std::size_t a = 0; a < r.axes.size(); ++a) {
      const std::size_t ia = rem / r.strides[a];
      rem %= r.strides[a];
      old += (a == axis ? keep[ia] : ia) * g.strides[a];
    }
    r.values[c] = g.values[old];
    r.log_values[c] = g.log_values[old];
  }
  return r;
}

std::size_t mask_glitch_cells(OpGrid& g) {
  std::vector<std::size_t> glitches;
  const std::size_t dims = g.axes.size();
  for (std::size_t c = 0; c < g.values.size(); ++c) {
    const double v = g.values[c];
    if (std::isnan(v)) continue;
    int smaller = 0, larger = 0;
    bool above_all = true;
    std::size_t rem = c;
    for (std::size_t a = 0; a < dims && above_all; ++a) {
      const std::size_t i = rem / g.strides[a];
      rem %= g.strides[a];
      if (i > 0) {
        const double w = g.values[c - g.strides[a]];
        if (!std::isnan(w)) {
          ++smaller;
          above_all = v > kGlitchFactor * w;
        }
      }
      if (above_all && i + 1 < g.axes[a].size()) {
        const double w = g.values[c + g.strides[a]];
        if (!std::isnan(w)) {
          ++larger;
          above_all = v > kGlitchFactor * w;
        }
      }
    }
    if (above_all && smaller >= 1 && larger >= 1) glitches.push_back(c);
  }
  for (std::size_t c : glitches) g.values[c] = g.log_values[c] = std::numeric_limits<double>::quiet_NaN();
  return glitches.size();
}

bool reads_without_glitches(const std::string& op) {
  return op == "gemm" || op == "moe" || op == "context_attention" || op == "generation_attention" ||
         op == "context_attention_window" || op == "generation_attention_window" || op == "mla_context" ||
         op == "mla_generation";
}

void mask_glitch_cells(OpTable& t) {
  t.glitch_cells = 0;
  if (!reads_without_glitches(t.op)) return;
  for (OpGrid& g : t.grids) t.glitch_cells += mask_glitch_cells(g);
}

namespace {

std::string key_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 9e15) return std::to_string(static_cast<std::int64_t>(d));
  }
  return v.dump();
}

}  // namespace

std::string parse_op_table(const std::string& text, OpTable& out) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "not a JSON object";
  if (j.value("format", "") != "servesim-op-table/1") return "unknown format (expected servesim-op-table/1)";
  out = OpTable();
  out.gpu = j.value("gpu", "");
  out.backend = j.value("backend", "");
  out.backend_version = j.value("backend_version", "");
  out.op = j.value("op", "");
  if (!j.contains("key_fields") || !j.contains("axis_fields") || !j.contains("tables")) return "missing fields";
  for (const auto& f : j["key_fields"]) out.key_fields.push_back(f.get<std::string>());
  for (const auto& f : j["axis_fields"]) out.axis_fields.push_back(f.get<std::string>());
  if (j.contains("source") && j["source"].is_object()) {
    out.source_file = j["source"].value("file", "");
    out.source_rows = j["source"].value("rows", static_cast<std::int64_t>(0));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& t : j["tables"]) {
    OpGrid g;
    for (const auto& k : t["key"]) g.key.push_back(key_text(k));
    if (g.key.size() != out.key_fields.size()) return "a table's key does not match key_fields";
    g.kernel = t.value("kernel", "");
    std::size_t cells = 1;
    for (const auto& a : t["axes"]) {
      std::vector<double> axis;
      std::vector<double> logs;
      for (const auto& v : a) {
        const double x = v.get<double>();
        if (!(x > 0)) return "axis values must be positive";
        if (!axis.empty() && !(x > axis.back())) return "axis values must increase";
        axis.push_back(x);
        logs.push_back(interp_log(x));
      }
      if (axis.empty()) return "empty axis";
      cells *= axis.size();
      g.axes.push_back(std::move(axis));
      g.log_axes.push_back(std::move(logs));
    }
    if (g.axes.size() != out.axis_fields.size()) return "a table's axes do not match axis_fields";
    g.strides.assign(g.axes.size(), 1);
    for (std::size_t a = g.axes.size(); a-- > 1;) g.strides[a - 1] = g.strides[a] * g.axes[a].size();
    const auto& vals = t["values"];
    if (!vals.is_array() || vals.size() != cells) return "a table's values do not fill its grid";
    g.values.reserve(cells);
    g.log_values.reserve(cells);
    for (const auto& v : vals) {
      if (v.is_null()) {
        g.values.push_back(nan);
        g.log_values.push_back(nan);
      } else {
        const double x = v.get<double>();
        if (!(x > 0)) return "latencies must be positive";
        g.values.push_back(x);
        g.log_values.push_back(interp_log(x));
      }
    }
    out.grids.push_back(std::move(g));
  }
  return "";
}

}  // namespace servesim
