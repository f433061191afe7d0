#pragma once
/// Reading an operator table file and a GPU's facts from disk for the servesim_opcheck tools (the simulator itself
/// loads through ResourceCatalog).
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/file_io.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/profile_tables.h"

namespace servesim {

/// Parses an operator table file; false when it is missing or malformed (the parse error goes to stderr). As
/// measured: every cell a measurement to compare with (the checks read their held-out truths here). `as_priced`:
/// as the simulator loads it, its glitches read as unmeasured (mask_glitch_cells) and GEMM grids given their token
/// reading on what is left (choose_token_readings).
inline bool load_op_table_file(const std::string& path, OpTable& t, bool as_priced = false) {
  std::string text;
  if (!read_file(path, text)) return false;
  const std::string err = parse_op_table(text, t);
  if (!err.empty()) std::cerr << path << ": " << err << "\n";
  if (err.empty() && as_priced) read_as_priced(t);
  else if (err.empty()) choose_token_readings(t);
  return err.empty();
}

/// A copy of a measured table as the simulator reads it (load_op_table_file's `as_priced`).
inline OpTable priced_copy(OpTable t) {
  read_as_priced(t);
  return t;
}

/// A kernel grid with the held-out lines dropped, read as the simulator reads a table: the glitches among the kept
/// cells masked (mask_glitch_cells). The held-out cells stay in the measured grid as the truths.
inline OpGrid training_grid(const OpGrid& g, std::size_t axis, const std::vector<bool>& held) {
  OpGrid r = drop_grid_lines(g, axis, held);
  mask_glitch_cells(r);
  return r;
}

/// What the op checks need of a GPU (PROFILES_DIR/gpus/GPU.json); H100-SXM's figures where the file or a field is
/// missing.
struct GpuFacts {
  double hbm_tb_s = 3.35, bf16 = 989, fp8 = 1979;
  int sms = 132;
  std::string compute_capability;  ///< "major.minor", "" when the GPU file lacks it
};

inline GpuFacts load_gpu_facts(const std::string& root, const std::string& gpu) {
  GpuFacts facts;
  std::string text;
  if (!read_file(root + "/gpus/" + gpu + ".json", text)) return facts;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return facts;
  facts.hbm_tb_s = j.value("hbm_tb_s", facts.hbm_tb_s);
  if (j.contains("compute_capability") && j["compute_capability"].is_string())
    facts.compute_capability = j["compute_capability"].get<std::string>();
  facts.bf16 = j.value("bf16_tflops", facts.bf16);
  if (j.contains("fp8_tflops") && j["fp8_tflops"].is_number()) facts.fp8 = j["fp8_tflops"].get<double>();
  facts.sms = j.value("sm_count", facts.sms);
  return facts;
}

}  // namespace servesim
