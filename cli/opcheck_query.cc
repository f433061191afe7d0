// servesim_opcheck --query: the simulator's GEMM, collective, attention and MoE predictors over the full measured
// tables, for shapes read from standard input, so that measurements from another campaign can be compared with them
// (scripts/cross_source.py) and the predictors swept between measured shapes. One query per line, one answer per
// line:
//
//   gemm DTYPE M N K            ->  <us> <extrapolated 0|1>      (PROFILES_DIR/GPU/BACKEND/gemm.json)
//   collective OP half GPUS E   ->  <us> <extrapolated 0|1>      (PROFILES_DIR/GPU/nccl.json, E elements per GPU,
//                                                                 read by CollectiveModel as roles read it)
//   attention_prefill KV_DTYPE HEAD_DIM HEADS KV_HEADS Q:CTX [Q:CTX ...]
//                               ->  <us> <extrapolated 0|1>      (PROFILES_DIR/GPU/BACKEND/context_attention.json:
//                                                                 one batch of prompt chunks, q new tokens over ctx
//                                                                 keys each, priced as the simulator prices it:
//                                                                 one-token prompts on a FlashAttention-2 grid by
//                                                                 generation_attention.json, a decode call)
//   attention_decode KV_DTYPE HEAD_DIM HEADS KV_HEADS CTX [CTX ...]
//                               ->  <us> <extrapolated 0|1>      (.../generation_attention.json: one batch of
//                                                                 decodes over CTX keys each)
//   attention_step KV_DTYPE HEAD_DIM HEADS KV_HEADS ITEM [ITEM ...]
//                               ->  <us> <extrapolated 0|1>      (both files: prompt chunks Q:CTX and decodes CTX
//                                                                 in one kernel call, as a vLLM role prices a mixed
//                                                                 step: the decodes beside the prompt tokens; on a
//                                                                 FlashAttention-2 grid, one-token prompts alone or
//                                                                 beside decodes as one decode call)
//   moe DTYPE HIDDEN INTER TOPK EXPERTS TP EP DISTRIBUTION TOKENS
//                               ->  <us> <extrapolated 0|1>      (.../moe.json: one MoE layer of TOKENS tokens
//                                                                 under the grid's own measured routing, read by
//                                                                 MoePredictor as a role of that shape reads it)
//
// Attention predictors are built as the simulator builds them (AttentionPredictor with the cross-validated choice of
// interpolation) from the grid whose key is exactly (KV_DTYPE, HEAD_DIM, HEADS, KV_HEADS), with the SM count of
// PROFILES_DIR/gpus/GPU.json, and the split rule of the grid's kernel; scripts/measured_attention.py scores them on
// measured ragged batches. MoE predictors likewise from the grid of exactly that key (opcheck::moe_grid_predictor).
//
// A query the tables cannot answer (no grid for the key, malformed line) prints "nan 1" and a message on stderr
// naming the line; the run goes on.
//
//   servesim_opcheck --query PROFILES_DIR GPU BACKEND
#include "cli/opcheck_query.h"

#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/op_table_file.h"
#include "cli/opcheck_checks.h"
#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/roofline_cost_model.h"

using namespace servesim;

namespace {

bool positive(double v) { return std::isfinite(v) && v > 0; }

/// Attention queries: the predictor for one exact grid key, built once per (phase, key).
class AttentionQueries {
 public:
  AttentionQueries(const std::string& dir, const GpuFacts& gpu)
      : dir_(dir), sms_(gpu.sms),
        split_out_(fa3_split_out_us_per_element(gpu.hbm_tb_s, RooflineConstants().memory_efficiency)) {}

  enum class Kind { kPrefill, kDecode, kStep };

  /// Prices the rest of `in` (per-request lengths after the key fields); sets `why` when it cannot.
  double price(Kind kind, std::istringstream& in, bool* extrapolated, std::string& why) {
    std::string dtype;
    int head_dim = 0, heads = 0, kv_heads = 0;
    if (!(in >> dtype >> head_dim >> heads >> kv_heads) || head_dim <= 0 || heads <= 0 || kv_heads <= 0 ||
        heads % kv_heads != 0) {
      why = "expected: attention_prefill|attention_decode|attention_step KV_DTYPE HEAD_DIM HEADS KV_HEADS LENGTHS... "
            "with HEADS a positive multiple of KV_HEADS";
      return NAN;
    }
    std::vector<PrefillChunk> chunks;
    std::vector<std::int32_t> contexts;
    std::string item;
    while (in >> item) {
      long long q = 1, ctx = 0;
      char colon = 0;
      std::istringstream f(item);
      // A step's items are chunks where they hold a colon, decodes otherwise.
      const bool decode = kind == Kind::kDecode || (kind == Kind::kStep && item.find(':') == std::string::npos);
      const bool read = decode ? static_cast<bool>(f >> ctx) : static_cast<bool>(f >> q >> colon >> ctx);
      if (!read || !f.eof() || (!decode && colon != ':') || q < 1 || ctx < q || ctx > (1LL << 30)) {
        why = "bad request length '" + item + "' (" + (decode ? "CTX >= 1" : "Q:CTX with 1 <= Q <= CTX") + ")";
        return NAN;
      }
      if (decode) contexts.push_back(static_cast<std::int32_t>(ctx));
      else chunks.push_back(PrefillChunk{static_cast<std::int32_t>(q), ctx});
    }
    if (chunks.empty() && contexts.empty()) {
      why = "no request lengths";
      return NAN;
    }
    const std::vector<std::string> key = {dtype, std::to_string(head_dim), std::to_string(heads),
                                          std::to_string(kv_heads)};
    *extrapolated = false;
    // One-token prompts alone or beside decodes: FlashAttention-2's decode path over every request, priced by the
    // decode grid as the simulator prices it (TableCostModel::one_token_prompts_decode).
    if (!chunks.empty() && all_one_token(chunks)) {
      const AttentionPredictor* d = have_grid(true, key) ? predictor(true, key) : nullptr;
      if (d && one_token_prompts_decode(d->geometry(), chunks))
        return d->decode_us(decode_call_contexts(contexts, chunks), extrapolated);
    }
    double us = 0;
    for (const bool decode : {false, true}) {
      if ((decode ? contexts.empty() : chunks.empty())) continue;
      const AttentionPredictor* p = predictor(decode, key);
      if (!p) {
        why = "no " + std::string(decode ? "generation" : "context") + "_attention grid for " + key[0] + " " + key[1] +
              " " + key[2] + " " + key[3];
        return NAN;
      }
      us += decode ? p->decode_us(contexts, extrapolated, /*beside_prefill=*/!chunks.empty())
                   : p->prefill_us(chunks, extrapolated);
    }
    return us;
  }

 private:
  /// The phase's table holds a grid of this key.
  bool have_grid(bool decode, const std::vector<std::string>& key) { return load(decode) && tables_[decode].find(key); }

  bool load(bool decode) {
    if (!loaded_[decode]) {
      loaded_[decode] = true;
      have_[decode] =
          load_op_table_file(dir_ + (decode ? "generation_attention.json" : "context_attention.json"), tables_[decode],
                            /*as_priced=*/true);
    }
    return have_[decode];
  }

  const AttentionPredictor* predictor(bool decode, const std::vector<std::string>& key) {
    OpTable& t = tables_[decode];
    if (!load(decode)) return nullptr;
    std::string name = decode ? "d" : "p";
    for (const std::string& k : key) name += " " + k;
    auto it = built_.find(name);
    if (it == built_.end()) {
      const OpGrid* g = t.find(key);
      AttentionPredictor p;
      bool ok = false;
      if (g) {
        AttentionGeometry kg = table_grid_geometry(*g, sms_, decode);
        if (decode && fa2_decode(kg))
          set_fa2_hbm_ctas(kg, fit_fa2_hbm_ctas(t, sms_, [](const OpGrid& x) { return x; }));
        kg.split_out_us_per_element = split_out_;
        ok = p.build(*g, decode, kg, /*choose=*/true);
      }
      it = built_.emplace(name, ok ? p : AttentionPredictor{}).first;
    }
    return it->second.ok() ? &it->second : nullptr;
  }

  std::string dir_;
  int sms_;
  double split_out_;  ///< FlashAttention-3's split-kernel output traffic, as the simulator prices it
  OpTable tables_[2];
  bool loaded_[2] = {false, false}, have_[2] = {false, false};
  std::map<std::string, AttentionPredictor> built_;
};

}  // namespace

int query_main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: servesim_opcheck --query PROFILES_DIR GPU BACKEND  (queries on standard input)\n";
    return 2;
  }
  const std::string root = argv[2], gpu = argv[3], backend = argv[4];
  const std::string dir = root + "/" + gpu + "/" + backend + "/";
  OpTable gemm, nccl;
  const bool have_gemm = load_op_table_file(dir + "gemm.json", gemm, /*as_priced=*/true);
  const bool have_nccl = load_op_table_file(root + "/" + gpu + "/nccl.json", nccl);
  CollectiveModel collectives;  // the simulator's NCCL predictor (16-bit collectives), as roles run it
  collectives.set_tables(have_nccl ? &nccl : nullptr, nullptr, 0);
  std::map<std::string, GemmCurve> curves;  // by "dtype n k"
  const GpuFacts facts = load_gpu_facts(root, gpu);
  AttentionQueries attention(dir, facts);
  OpTable moe;
  const bool have_moe = load_op_table_file(dir + "moe.json", moe, /*as_priced=*/true);
  std::map<std::vector<std::string>, MoePredictor> moe_curves;
  std::string line;
  long line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    std::istringstream in(line);
    std::string kind;
    if (!(in >> kind)) continue;
    double us = NAN;
    bool extrapolated = true;
    std::string why;
    if (kind == "gemm") {
      std::string dtype;
      double m = 0, n = 0, k = 0;
      if (!(in >> dtype >> m >> n >> k) || !positive(m) || !positive(n) || !positive(k)) {
        why = "expected: gemm DTYPE M N K with M, N, K > 0";
      } else if (!have_gemm) {
        why = "no gemm.json for " + gpu + "/" + backend;
      } else if (const OpGrid* g = gemm.find({dtype})) {
        const std::string key = dtype + " " + std::to_string(n) + " " + std::to_string(k);
        auto it = curves.find(key);
        if (it == curves.end()) it = curves.emplace(key, make_gemm_curve(*g, n, k)).first;
        if (it->second.ok()) {
          extrapolated = false;
          us = it->second.us(m, &extrapolated);
        } else {
          why = "no measurements near n " + std::to_string(n) + ", k " + std::to_string(k);
        }
      } else {
        why = "no gemm grid for dtype " + dtype;
      }
    } else if (kind == "collective") {
      std::string op, dtype;
      int gpus = 0;
      double elements = 0;
      if (!(in >> op >> dtype >> gpus >> elements) || gpus < 2 || !positive(elements)) {
        why = "expected: collective OP DTYPE GPUS ELEMENTS with GPUS >= 2 and ELEMENTS > 0";
      } else if (!have_nccl) {
        why = "no nccl.json for " + gpu;
      } else if (dtype != "half") {
        why = "the simulator prices 16-bit collectives only (dtype half), not " + dtype;
      } else if (const CollectiveTime t = collectives.nccl(op, elements, gpus); t.ok) {
        us = t.us;
        extrapolated = t.extrapolated;
      } else {
        why = "no collective grid for " + op + " half " + std::to_string(gpus);
      }
    } else if (kind == "attention_prefill" || kind == "attention_decode" || kind == "attention_step") {
      using K = AttentionQueries::Kind;
      us = attention.price(kind == "attention_prefill" ? K::kPrefill : kind == "attention_decode" ? K::kDecode : K::kStep,
                           in, &extrapolated, why);
      if (!why.empty()) extrapolated = true;
    } else if (kind == "moe") {
      std::vector<std::string> key(8);
      long long tokens = 0;
      for (std::string& k : key) in >> k;
      if (!(in >> tokens) || tokens < 1 || tokens > (1LL << 30)) {
        why = "expected: moe DTYPE HIDDEN INTER TOPK EXPERTS TP EP DISTRIBUTION TOKENS with TOKENS >= 1";
      } else if (!have_moe) {
        why = "no moe.json for " + gpu + "/" + backend;
      } else if (const OpGrid* g = moe.find(key)) {
        auto it = moe_curves.find(key);
        if (it == moe_curves.end()) {
          MoePredictor p;
          it = moe_curves.emplace(key, opcheck::moe_grid_predictor(*g, facts, p) ? p : MoePredictor{}).first;
        }
        if (it->second.ok()) {
          extrapolated = false;
          us = it->second.us(tokens, {}, &extrapolated);
        } else {
          why = "the moe grid of that key builds no predictor";
        }
      } else {
        why = "no moe grid for that key (dtype hidden inter topk experts tp ep distribution)";
      }
    } else {
      why = "unknown query kind '" + kind +
            "' (gemm, collective, attention_prefill, attention_decode, attention_step or moe)";
    }
    if (!why.empty()) std::cerr << "query line " << line_no << ": " << why << "\n";
    std::cout << (std::isnan(us) ? std::string("nan") : std::to_string(us)) << " " << (extrapolated ? 1 : 0) << "\n";
  }
  return 0;
}
