// servesim_opcheck: per-op held-out validation of the measured-table predictors (the C++ code the simulator
// runs). For each table, whole grid lines (shapes) are held out, the predictor is rebuilt from the rest, and the
// held-out measurements are predicted. Prints one JSON document; scripts/validate_ops.py turns it into
// docs/validation.md and profiles/<gpu>/<backend>/validation.json.
//
//   servesim_opcheck PROFILES_DIR GPU BACKEND [--cells FILE]   (FILE: every held-out cell of the reported
//                                                               figures, one CSV line each; cli/cell_log.h)
//   servesim_opcheck --transfer PROFILES_DIR FROM TO BACKEND   (the datasheet path's table transfer, see
//                                                              opcheck_transfer.cc)
//   servesim_opcheck --query PROFILES_DIR GPU BACKEND          (predictions for shapes on standard input, see
//                                                              opcheck_query.cc)
#include <algorithm>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cell_log.h"
#include "cli/file_io.h"
#include "cli/op_table_file.h"
#include "cli/opcheck_checks.h"
#include "cli/opcheck_query.h"
#include "cli/opcheck_transfer.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/l2_warmth.h"
#include "core/fidelity/op_table.h"

using namespace servesim;
using namespace servesim::opcheck;

namespace {

/// The families a report can hold, in its order (`--family` picks one).
const char* const kFamilies[] = {"gemm", "attention_prefill", "attention_decode", "mla_prefill", "mla_decode", "moe",
                                 "custom_allreduce", "deepep_ll", "deepep_normal", "nccl", "p2p"};

/// How many cells of a measured table the simulator reads as unmeasured (mask_glitch_cells).
std::size_t glitch_cells(OpTable t) {
  mask_glitch_cells(t);
  return t.glitch_cells;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--transfer") return transfer_check_main(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "--query") return query_main(argc, argv);
  const char* usage = "usage: servesim_opcheck PROFILES_DIR GPU BACKEND [--cells FILE] [--family NAME]\n";
  std::string cells, only;
  bool ok = argc >= 4;
  for (int i = 4; ok && i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--cells" && flag != "--family") ||
        !(flag == "--cells" ? cells : only).empty())
      ok = false;
    else
      (flag == "--cells" ? cells : only) = argv[i + 1];
  }
  if (!ok) {
    std::cerr << usage;
    return 2;
  }
  if (!only.empty() && std::find(std::begin(kFamilies), std::end(kFamilies), only) == std::end(kFamilies)) {
    std::cerr << "--family: unknown family \"" << only << "\" (one of";
    for (const char* f : kFamilies) std::cerr << " " << f;
    std::cerr << ")\n";
    return 2;
  }
  if (!cells.empty() && !cell_log().open(cells)) {
    std::cerr << "--cells: cannot write " << cells << "\n";
    return 1;
  }
  // Every family unless --family names one (a report of that family alone, as the full report has it).
  auto want = [&only](const char* family) { return only.empty() || only == family; };
  const std::string root = argv[1], gpu = argv[2], backend = argv[3];
  const GpuFacts facts = load_gpu_facts(root, gpu);
  OJson out;
  out["gpu"] = gpu;
  out["backend"] = backend;
  OJson fam;
  OpTable t;
  const std::string dir = root + "/" + gpu + "/" + backend + "/";
  if (load_op_table_file(dir + "gemm.json", t)) {
    out["backend_version"] = t.backend_version;
    if (want("gemm")) {
      fam["gemm"] = check_gemm(t, backend);
      fam["gemm"]["glitch_cells"] = glitch_cells(t);
    }
  }
  L2Warmth l2;
  {
    std::string text;
    if (read_file(root + "/" + gpu + "/l2_warmth.json", text)) {
      const std::string err = parse_l2_warmth(text, l2);
      if (!err.empty()) {
        std::cerr << gpu << "/l2_warmth.json: " << err << "\n";
        return 1;
      }
    }
  }
  {
    OpTable gen;
    const bool have_gen = load_op_table_file(dir + "generation_attention.json", gen);
    const OpTable gen_read = priced_copy(gen);  // beside the prefill table, as the simulator reads it
    if (want("attention_prefill") && load_op_table_file(dir + "context_attention.json", t)) {
      fam["attention_prefill"] =
          check_attention(t, false, facts.sms, facts.hbm_tb_s, l2, have_gen ? &gen_read : nullptr);
      fam["attention_prefill"]["glitch_cells"] = glitch_cells(t);
    }
    if (have_gen && want("attention_decode")) {
      fam["attention_decode"] = check_attention(gen, true, facts.sms, facts.hbm_tb_s, l2);
      fam["attention_decode"]["glitch_cells"] = gen_read.glitch_cells;
    }
  }
  if (want("mla_prefill") || want("mla_decode")) {
    OpTable gemm;
    MlaShapes sh;
    std::string text;
    if (read_file(root + "/models/DeepSeek-V3.json", text)) {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (!j.is_discarded() && j.contains("config")) {
        const auto& c = j["config"];
        sh.hidden = c.value("hidden_size", sh.hidden);
        sh.q_lora = c.value("q_lora_rank", sh.q_lora);
        sh.kv_lora = c.value("kv_lora_rank", sh.kv_lora);
        sh.nope = c.value("qk_nope_head_dim", sh.nope);
        sh.rope = c.value("qk_rope_head_dim", sh.rope);
        sh.v = c.value("v_head_dim", sh.v);
      }
    }
    // Module tables (H100/H200) or A100's per-kernel tables; both phases are loaded (the projection cap uses both).
    // The checked phase as measured (its truths), the other phase and the GEMM table as the simulator reads them.
    OpTable ctx, gen;
    load_op_table_file(dir + "gemm.json", gemm, /*as_priced=*/true);
    const bool have_ctx = load_op_table_file(dir + "mla_context.json", ctx);
    const bool have_gen = load_op_table_file(dir + "mla_generation.json", gen);
    if (have_ctx && want("mla_prefill")) {
      OJson j = check_mla(ctx, priced_copy(gen), gemm, false, facts.sms, sh);
      j["glitch_cells"] = glitch_cells(ctx);
      if (j["all"]["n"].get<std::size_t>() > 0) fam["mla_prefill"] = j;
    }
    if (have_gen && want("mla_decode")) {
      OJson j = check_mla(gen, priced_copy(ctx), gemm, true, facts.sms, sh);
      j["glitch_cells"] = glitch_cells(gen);
      if (j["all"]["n"].get<std::size_t>() > 0) fam["mla_decode"] = j;
    }
  }
  if (want("moe") && load_op_table_file(dir + "moe.json", t)) {
    fam["moe"] = check_moe(t, facts);
    fam["moe"]["glitch_cells"] = glitch_cells(t);
  }
  if (want("custom_allreduce") && load_op_table_file(dir + "custom_allreduce.json", t))
    fam["custom_allreduce"] = check_curves(
        t, "custom_allreduce", backend == "vllm" && vllm_all_reduce_nccl_at_buffer(facts.compute_capability));
  if (want("deepep_ll") && load_op_table_file(dir + "deepep_ll.json", t))
    fam["deepep_ll"] = check_deepep(t, "deepep_ll");
  if (want("deepep_normal") && load_op_table_file(dir + "deepep_normal.json", t))
    fam["deepep_normal"] = check_deepep(t, "deepep_normal");
  // The sglang folder holds only its DeepEP tables; the GPU's NCCL table is validated with the other backends.
  if (want("nccl") && backend != "sglang" && load_op_table_file(root + "/" + gpu + "/nccl.json", t))
    fam["nccl"] = check_curves(t, "nccl");
  if (want("p2p") && backend != "sglang" && load_op_table_file(root + "/" + gpu + "/p2p.json", t))
    fam["p2p"] = check_curves(t, "p2p", false, false);
  out["families"] = fam;
  std::cout << out.dump(1) << "\n";
  if (!cell_log().close()) {
    std::cerr << "--cells: writing " << cells << " failed\n";
    return 1;
  }
  return 0;
}
