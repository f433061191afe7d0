#include "core/fidelity/table_cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/fidelity/batch_split.h"
#include "core/sim/det_math.h"
#include "core/spec/cuda_graph_plan.h"

namespace servesim {

// --------------------------------------------------------------------------------------------- construction

namespace {

std::int64_t piecewise_capture_max(const EngineOptions& e, const GpuSpec& g, const Parallelism& p) {
  // vLLM V1 alone captures piecewise graphs (everything but attention) for batches up to its largest size; SGLang's
  // and TRT-LLM's default configurations run every batch they have not captured eagerly.
  if (e.backend != "vllm" || e.enforce_eager) return 0;
  const CudaGraphPlan plan = cuda_graph_plan(e, g.memory_bytes, p.tp_attn * p.dp_attn);
  return plan.sizes.empty() ? 0 : plan.sizes.back();
}

}  // namespace

TableCostModel::TableCostModel(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                               const EngineOptions& engine, ProfileTables tables, EfficiencyCurves curves,
                               std::uint64_t seed)
    : m_(model),
      formats_(servesim::weight_formats(model, engine.dtype)),
      g_(gpu),
      p_(par),
      e_(engine),
      t_(std::move(tables)),
      curves_(std::move(curves)),
      roofline_(model, gpu, par, engine),
      k_(backend_constants(engine.backend)),
      rng_(seed, static_cast<std::uint64_t>(RngStream::kMoe)),
      max_capture_(piecewise_capture_max(engine, gpu, par)) {
  // Scenario overrides of the calibrated host constants (engine.host).
  if (e_.host.iteration_us >= 0) k_.cpu_iteration_us = e_.host.iteration_us;
  if (e_.host.per_request_us >= 0) k_.cpu_per_request_us = e_.host.per_request_us;
  if (e_.host.per_token_us >= 0) k_.cpu_per_token_us = e_.host.per_token_us;
  if (e_.host.launch_us >= 0) k_.launch_us = e_.host.launch_us;
  routing_ = e_.moe_routing == "balanced" ? MoeRouting::kBalanced
             : e_.moe_routing == "power_law" ? MoeRouting::kPowerLaw
                                             : MoeRouting::kUniform;
  alpha_ = e_.moe_power_law_alpha;
  async_host_ = async_hides_host_time(e_, p_.pp);
  heads_local_ = static_cast<double>(m_.num_attention_heads) / p_.tp_attn;
  kv_heads_local_ = std::max(1.0, static_cast<double>(m_.num_key_value_heads) / p_.tp_attn);
  qk_norm_kernels_ = m_.qk_norm_across_heads ? 2 : m_.qk_norm_per_head ? k_.qk_norm_kernels : 0;
  layers_per_stage_ = static_cast<int>((m_.num_hidden_layers + p_.pp - 1) / p_.pp);
  layers_total_ = static_cast<double>(layers_per_stage_) * p_.pp;
  moe_layers_total_ = static_cast<double>(m_.moe_layers());
  dense_layers_total_ = static_cast<double>(m_.num_hidden_layers - m_.moe_layers());
  full_layers_ = layers_total_;
  if (m_.has_sliding_window() && !m_.is_mla()) {
    // Sliding and full layers in the model's proportion (gpt-oss alternates them, so every stage has half).
    sliding_layers_ = layers_total_ * static_cast<double>(m_.sliding_layers) / static_cast<double>(m_.num_hidden_layers);
    full_layers_ = layers_total_ - sliding_layers_;
  }
  const PriceSource fallback = curves_.ok ? PriceSource::kDatasheet : PriceSource::kRoofline;
  for (auto& s : source_) s = fallback;
  source_[static_cast<int>(OpFamily::kNorm)] = PriceSource::kRoofline;
  source_[static_cast<int>(OpFamily::kEmbedding)] = PriceSource::kRoofline;
  source_[static_cast<int>(OpFamily::kPipelineP2p)] = PriceSource::kRoofline;
  source_[static_cast<int>(OpFamily::kOverhead)] = PriceSource::kCalibrated;
  hop_intra_node_ = p_.world_size() <= g_.gpus_per_node;
  hop_ = pipeline_hop_shape(e_.backend);
  if (p_.pp > 1) {
    if (const OpGrid* g = t_.p2p.find({hop_intra_node_ ? "intra_node" : "inter_node"}); g && g->axes.size() == 1) {
      p2p_hop_ = LogCurve(g->axes[0], g->values);
      if (!p2p_hop_.empty()) source_[static_cast<int>(OpFamily::kPipelineP2p)] = PriceSource::kTable;
    }
  }
  if (!m_.is_moe()) source_[static_cast<int>(OpFamily::kMoe)] = fallback;
  build_gemms();
  if (!m_.is_mla()) {
    build_attention(t_.context_attention, false, prefill_, prefill_scale_, prefill_approx_);
    build_attention(t_.generation_attention, true, decode_, decode_scale_, decode_approx_);
    if (sliding_layers_ > 0) {
      const int w = static_cast<int>(m_.sliding_window);
      build_attention(t_.context_attention_window, false, prefill_win_, prefill_win_scale_, prefill_win_approx_, w);
      build_attention(t_.generation_attention_window, true, decode_win_, decode_win_scale_, decode_win_approx_, w);
    }
  } else {
    build_mla_attention();
  }
  if (prefill_.ok()) source_[static_cast<int>(OpFamily::kAttentionPrefill)] = PriceSource::kTable;
  if (decode_.ok()) source_[static_cast<int>(OpFamily::kAttentionDecode)] = PriceSource::kTable;
  build_moe();
  // The backend's all-reduce table (vLLM's dispatcher, TRT-LLM AUTO) on fully NVLinked 2/4/6/8 GPU groups, its
  // eager variant only up to vLLM's custom kernel's 8 MiB buffer (CollectiveModel::all_reduce); NCCL beyond its sizes.
  const bool custom_ok = g_.nvlink_gb_s > 0 && p_.tp_attn <= g_.gpus_per_node && p_.tp_attn % 2 == 0 &&
                         p_.tp_attn <= 8 && e_.backend != "sglang";
  collectives_.set_tables(t_.nccl.empty() ? nullptr : &t_.nccl,
                          t_.custom_allreduce.empty() || !custom_ok ? nullptr : &t_.custom_allreduce, 8.0 * (1 << 20));
  if ((p_.tp_attn <= 1 && t_.any()) || collectives_.has_nccl() || collectives_.has_custom())
    source_[static_cast<int>(OpFamily::kAllReduce)] = PriceSource::kTable;
  // EP all-to-all: measured NCCL alltoall inside a node; the datasheet link beyond (all_to_all_us). SGLang roles
  // launched with --moe-a2a-backend deepep exchange tokens with DeepEP, measured on one node: its tables inside a
  // node. SGLang's default (none) keeps the NCCL all-to-all.
  if (e_.backend == "sglang" && e_.moe_a2a_backend == "deepep" && m_.is_moe() && !t_.deepep_ll.empty() &&
      !t_.deepep_normal.empty()) {
    const auto H = static_cast<std::int64_t>(m_.hidden_size), K = static_cast<std::int64_t>(m_.num_experts_per_tok),
               E = static_cast<std::int64_t>(m_.num_experts);
    deepep_ll_ = DeepEpTable(t_.deepep_ll, H, K, E);
    deepep_normal_ = DeepEpTable(t_.deepep_normal, H, K, E, kDeepEpNormalSms);
    use_deepep_ = deepep_ll_.ok() && deepep_normal_.ok() && p_.ep_ffn > 1 && p_.ep_ffn <= g_.gpus_per_node;
  }
  source_[static_cast<int>(OpFamily::kAllToAll)] =
      use_deepep_ && !t_.deepep_from.empty() ? PriceSource::kDatasheet
      : use_deepep_ || (collectives_.has_nccl() && p_.ep_ffn <= 8 && p_.ep_ffn <= g_.gpus_per_node)
          ? PriceSource::kTable
          : PriceSource::kRoofline;
  source_[static_cast<int>(OpFamily::kAfTransfer)] = PriceSource::kRoofline;
}

TableCostModel::GemmUse TableCostModel::make_gemm(double n, double k, double count, WeightFormat f) const {
  f = math_format(f);
  GemmUse g;
  g.count = count;
  g.fp8 = is_fp8(f);
  g.table.n = n;
  g.table.k = k;
  if (t_.gemm.empty()) return g;
  // vLLM's fp8_block grid is validated but does not price: every cell at m <= 16 is >= 55 us whatever n and k
  // (32 x 32: 155-183 us at every m), where TensorRT-LLM's block-FP8 kernels take 9-19 us at the same shapes and
  // the two agree within 0-8% at m = 8192; and vLLM's own MLA modules, CUDA-graph timed with their block-FP8
  // projections inside, measure less than those projections priced from it. A per-call floor of host time, not
  // kernel time. vLLM-table roles (vllm, sglang) price block-FP8 GEMMs on the per-tensor fp8 grid instead (the same
  // FP8 tensor-core GEMM; within -15%..+14% of fp8_block at m = 8192 on the shapes above).
  const bool vllm_tables = e_.backend != "trtllm";
  const WeightFormat grid_format = f == WeightFormat::kFp8Block && vllm_tables ? WeightFormat::kFp8 : f;
  const OpGrid* grid = t_.gemm.find({gemm_table_dtype(grid_format)});
  if (grid) g.table = make_gemm_curve(*grid, n, k);
  return g;
}

void TableCostModel::build_gemms() {
  // Each module on the grid of its weight format (weight_format.h): a pre-quantised checkpoint's own format, else
  // the engine dtype's (online FP8 = per-tensor fp8 grid).
  const WeightFormat fa = formats_.attention, fd = formats_.dense;
  const WeightFormat bf16 = WeightFormat::kBf16;
  const double H = static_cast<double>(m_.hidden_size);
  layer_gemms_.clear();
  dense_gemms_.clear();
  moe_gemms_.clear();
  if (m_.is_mla()) {
    const double q_n = m_.q_lora_rank > 0 ? static_cast<double>(m_.q_lora_rank)
                                          : heads_local_ * static_cast<double>(m_.qk_nope_head_dim + m_.qk_rope_head_dim);
    layer_gemms_.push_back(make_gemm(q_n + static_cast<double>(m_.kv_lora_rank + m_.qk_rope_head_dim), H, 1, fa));
    if (m_.q_lora_rank > 0)
      layer_gemms_.push_back(make_gemm(heads_local_ * static_cast<double>(m_.qk_nope_head_dim + m_.qk_rope_head_dim),
                                       static_cast<double>(m_.q_lora_rank), 1, fa));
    layer_gemms_.push_back(make_gemm(heads_local_ * static_cast<double>(m_.qk_nope_head_dim + m_.v_head_dim),
                                     static_cast<double>(m_.kv_lora_rank), 1, fa));
    layer_gemms_.push_back(make_gemm(H, heads_local_ * static_cast<double>(m_.v_head_dim), 1, fa));
  } else {
    layer_gemms_.push_back(make_gemm((heads_local_ + 2 * kv_heads_local_) * static_cast<double>(m_.head_dim), H, 1, fa));
    fuse_input_quant(layer_gemms_.back(), fa);  // after the input RMSNorm (the o projection follows attention: not fused)
    layer_gemms_.push_back(make_gemm(H, heads_local_ * static_cast<double>(m_.head_dim), 1, fa));
  }
  if (dense_layers_total_ > 0) {
    const double inter = static_cast<double>(m_.intermediate_size) / p_.tp_ffn;
    dense_gemms_.push_back(make_gemm(2 * inter, H, 1, fd));
    fuse_input_quant(dense_gemms_.back(), fd);  // after the post-attention RMSNorm
    dense_gemms_.push_back(make_gemm(H, inter, 1, fd));
    fuse_input_quant(dense_gemms_.back(), fd);  // after SiLU-and-mul
  }
  if (m_.is_moe()) {
    moe_gemms_.push_back(make_gemm(static_cast<double>(m_.num_experts), H, 1, bf16));  // router, kept in bf16
    if (m_.shared_expert_intermediate_size > 0) {
      const double sh = static_cast<double>(m_.shared_expert_intermediate_size) / p_.tp_ffn;
      moe_gemms_.push_back(make_gemm(2 * sh, H, 1, fd));
      moe_gemms_.push_back(make_gemm(H, sh, 1, fd));
    }
  }
  // The LM head stays 16-bit in FP8 checkpoints.
  lm_head_ = make_gemm(static_cast<double>(m_.vocab_size) / p_.tp_attn, H, 1, bf16);
  bool all = lm_head_.table.ok();
  for (const auto* v : {&layer_gemms_, &dense_gemms_, &moe_gemms_})
    for (const GemmUse& g : *v) all = all && g.table.ok();
  if (all) source_[static_cast<int>(OpFamily::kGemm)] = PriceSource::kTable;
  if (lm_head_.table.ok()) source_[static_cast<int>(OpFamily::kLmHead)] = PriceSource::kTable;
}

namespace {

std::string kv_dtype_name(const EngineOptions& e) {
  if (e.kv_cache_dtype.rfind("fp8", 0) == 0) return "fp8";
  return "bfloat16";  // "auto" with bf16/fp16 weights, and FP8 weights (16-bit cache unless asked)
}

}  // namespace

void TableCostModel::build_attention(const OpTable& t, bool decode, AttentionPredictor& out, double& head_scale,
                                     bool& approx, int window) {
  if (t.empty()) return;
  const std::int64_t heads = static_cast<std::int64_t>(heads_local_ + 0.5);
  const std::int64_t kvh = static_cast<std::int64_t>(kv_heads_local_ + 0.5);
  const std::string kvd = kv_dtype_name(e_);
  const std::string hd = key_int(m_.head_dim);
  // Window tables key their grids by the window too (a fifth field).
  const std::size_t key_len = window > 0 ? 5 : 4;
  std::vector<std::string> key = {kvd, hd, key_int(heads), key_int(kvh)};
  if (window > 0) key.push_back(key_int(window));
  // Exact head configuration first; else the nearest one with the same head_dim, scaled by the head ratio.
  const OpGrid* best = t.find(key);
  approx = false;
  if (!best) {
    double best_score = 0;
    for (const std::string& dt : {kvd, std::string(kvd == "fp8" ? "bfloat16" : "fp8")}) {
      for (const OpGrid& g : t.grids) {
        if (g.key.size() != key_len || g.key[0] != dt || g.key[1] != hd) continue;
        if (window > 0 && g.key[4] != key_int(window)) continue;
        const double gh = std::atof(g.key[2].c_str()), gk = std::atof(g.key[3].c_str());
        if (gh <= 0 || gk <= 0) continue;
        const double score =
            std::fabs(interp_log(gh / static_cast<double>(heads))) +
            0.5 * std::fabs(interp_log((gh / gk) / (static_cast<double>(heads) / static_cast<double>(kvh))));
        if (!best || score < best_score) {
          best = &g;
          best_score = score;
        }
      }
      if (best) break;
    }
    if (!best) return;
    approx = true;
  }
  AttentionGeometry geo;
  geo.heads = std::atoi(best->key[2].c_str());
  geo.kv_heads = std::atoi(best->key[3].c_str());
  geo.sms = g_.sm_count > 0 ? g_.sm_count : 132;
  geo.window = window;
  head_scale = static_cast<double>(heads) / geo.heads;
  out.build(*best, decode, geo, /*choose=*/true);
}

void TableCostModel::build_mla_attention() {
  const int heads = static_cast<int>(heads_local_ + 0.5);
  // The module tables measure FP8 projections as block-quantised (fp8_block, DeepSeek-V3's released 128x128
  // format) and bfloat16 ones: an FP8 checkpoint or online FP8 takes the fp8_block module.
  const std::string gemm_type = is_fp8(math_format(formats_.attention)) ? "fp8_block" : "bfloat16";
  // Only module measurements price MLA. A100's older per-kernel tables (vllm_triton_mla) cost at least 241 us
  // (context) / 295 us (generation) per layer even for one head, one request and two keys, against 10.5 us for
  // A100's own FlashAttention decode: host time of an eager measurement, not kernel time, which a CUDA-graph step
  // does not pay. They stay validated as tables (servesim_opcheck); A100 MLA is datasheet-derived
  // (docs/validation.md, "A100 MLA").
  const bool have_ctx = select_mla_module_grid(t_.mla_context, kv_dtype_name(e_), gemm_type, heads, mla_prefill_) &&
                        mla_prefill_.module;
  const bool have_gen = select_mla_module_grid(t_.mla_generation, kv_dtype_name(e_), gemm_type, heads, mla_decode_) &&
                        mla_decode_.module;
  if (!have_ctx) mla_prefill_ = MlaModuleGrid();
  if (!have_gen) mla_decode_ = MlaModuleGrid();
  // Module tables hold the projections too. They are priced in the GEMM family at the batch's total tokens, capped
  // by the modules (mla_module_table.h), and removed from the module with the same predictors so that a uniform
  // batch costs exactly the module measurement.
  if (have_ctx && mla_prefill_.module) mla_cap_.add(mla_prefill_.grid, false);
  if (have_gen && mla_decode_.module) mla_cap_.add(mla_decode_.grid, true);
  mla_cap_.finish();
  auto projections = [this](double tokens) { return attention_projections_us(tokens, nullptr); };
  auto build = [&](MlaModuleGrid& grid, bool decode, AttentionPredictor& out, double& head_scale, bool& approx) {
    if (grid.module) subtract_mla_projections(grid.grid, decode, projections);
    // The work model's FlashAttention tiling stands in for FlashMLA's (one latent KV head, split-KV decode): it
    // supplies the mixed-batch composition effect around the measured uniform cells (an approximation).
    AttentionGeometry geo;
    geo.heads = grid.heads;
    geo.kv_heads = 1;
    geo.sms = g_.sm_count > 0 ? g_.sm_count : 132;
    head_scale = static_cast<double>(heads) / grid.heads;
    approx = grid.approx;
    out.build(grid.grid, decode, geo);
  };
  if (have_ctx) build(mla_prefill_, false, prefill_, prefill_scale_, prefill_approx_);
  if (have_gen) build(mla_decode_, true, decode_, decode_scale_, decode_approx_);
}

void TableCostModel::build_moe() {
  if (!m_.is_moe()) return;
  // Per-rank terms from the datasheet (only their ratio enters the price).
  const double H = static_cast<double>(m_.hidden_size);
  const double inter = static_cast<double>(m_.moe_intermediate_size) / p_.tp_ffn;
  // The experts' weight format (weight_format.h): FP8 formats run FP8 tensor-core math; MXFP4 on a GPU without FP4
  // tensor cores is weight-only (w4a16): 4.25-bit weights dequantised to 16-bit math.
  const WeightFormat fe = math_format(formats_.experts);
  const double wbytes = weight_format_bytes(formats_.experts, m_);
  const double peak = (is_fp8(fe) && g_.fp8_tflops > 0 ? g_.fp8_tflops : g_.bf16_tflops) * 1e12;
  moe_rank_.block_m = kMoeBlockRowsMin;
  moe_rank_.block_m_max = kMoeBlockRowsMax;
  moe_rank_.t0 = 0;
  moe_rank_.t_weight = 3.0 * H * inter * wbytes / (g_.hbm_tb_s * 1e12 * 0.8) * 1e6;
  moe_rank_.t_block = 2.0 * moe_rank_.block_m * 3.0 * H * inter / (peak * 0.7) * 1e6;
  if (t_.moe.empty()) return;
  const std::string dt = moe_table_dtype(fe);
  std::vector<std::string> key = {dt,
                                  key_int(m_.hidden_size),
                                  key_int(m_.moe_intermediate_size),
                                  key_int(m_.num_experts_per_tok),
                                  key_int(m_.num_experts),
                                  key_int(p_.tp_ffn),
                                  key_int(p_.ep_ffn),
                                  "balanced"};
  MoeRouting ref = MoeRouting::kBalanced;
  double alpha = 1.01;
  const OpGrid* g = t_.moe.find(key);
  if (!g && fe == WeightFormat::kFp8) {  // online FP8 on a shape measured block-scaled only
    key[0] = "fp8_block";
    g = t_.moe.find(key);
  }
  if (!g) {  // A100 has power-law rows only
    key[0] = dt;
    key[7] = "power_law_1.01";
    g = t_.moe.find(key);
    ref = MoeRouting::kPowerLaw;
  }
  if (!g) return;
  moe_dtype_ = g->key[0];
  if (moe_.build(*g, ref, alpha, moe_rank_, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok),
                 p_.ep_ffn))
    source_[static_cast<int>(OpFamily::kMoe)] = PriceSource::kTable;
}

// --------------------------------------------------------------------------------------------- predictors

WeightFormat TableCostModel::math_format(WeightFormat f) const {
  // A GPU without FP8 tensor cores (A100) runs an FP8 checkpoint weight-only (vLLM: FP8 Marlin, 16-bit math): the
  // bf16 grids price it; its weights still take 1 byte (memory_model).
  return is_fp8(f) && g_.fp8_tflops <= 0 ? WeightFormat::kBf16 : f;
}

void TableCostModel::count(OpFamily f, bool extrapolated) const {
  ++lookups_[static_cast<int>(f)];
  if (extrapolated) ++extrapolated_[static_cast<int>(f)];
}

double TableCostModel::datasheet_gemm_us(double m, double n, double k, bool fp8) const {
  (void)fp8;
  const double roof = roofline_.gemm_ns(m, n, k) / 1e3;
  if (!curves_.ok) return roof;
  const LogCurve& c = fp8 ? curves_.gemm_fp8 : curves_.gemm_bf16;
  return roof * c.eval(std::max(m, 1.0));
}

double TableCostModel::gemm_use_us(const GemmUse& g, double m, bool* extrap) const {
  if (m <= 0) return 0;
  if (!g.table.ok()) return datasheet_gemm_us(m, g.table.n, g.table.k, g.fp8);
  const double us = g.table.us(m, extrap);
  if (!g.quant_fused) return us;
  // Never below half the cell: the quantisation is the smaller kernel of the two at every shape (a guard).
  return std::max(0.5 * us, us - input_quant_us(m, g.table.k));
}

// vLLM's per-tensor FP8 grid times RowParallelLinear.forward on a 16-bit input (AIConfigurator's collect_gemm.py,
// static activation scale), so every cell holds a scaled_fp8_quant kernel before the CUTLASS GEMM. A serving vLLM
// compiles the model with Inductor and its custom ops off (-O2, the default), so the quantisation's native form is
// fused into the elementwise kernel that produces the GEMM's input: the RMSNorms before the QKV and gate/up
// projections and the SiLU-and-mul before the down projection. The o projection's input comes from the attention
// kernel and keeps its own. Block-FP8 (per-token-group scales, priced on this grid) keeps its time as measured.
void TableCostModel::fuse_input_quant(GemmUse& g, WeightFormat f) const {
  g.quant_fused = e_.backend == "vllm" && math_format(f) == WeightFormat::kFp8 && g.table.ok();
}

double TableCostModel::input_quant_us(double m, double k) const {
  return roofline_.memory_ns(3 * m * k) / 1e3 + roofline_.constants().kernel_fixed_us;
}

double TableCostModel::attention_projections_us(double tokens, bool* extrapolated) const {
  double us = 0;
  for (const GemmUse& g : layer_gemms_) us += g.count * gemm_use_us(g, tokens, extrapolated);
  return std::min(us, mla_cap_.cap_us(tokens));
}

double TableCostModel::projections_all_layers_us(double layers, double tokens, bool* extrapolated) const {
  if (!mla_cap_.empty()) return layers * attention_projections_us(tokens, extrapolated);
  // Without a cap, summed per GEMM as always (the same rounding, so results without MLA modules do not move).
  double us = 0;
  for (const GemmUse& g : layer_gemms_) us += layers * g.count * gemm_use_us(g, tokens, extrapolated);
  return us;
}

double TableCostModel::gemm_us(double m, double n, double k, bool fp8, bool* extrapolated) const {
  return gemm_use_us(make_gemm(n, k, 1, fp8 ? WeightFormat::kFp8 : WeightFormat::kBf16), m, extrapolated);
}

double TableCostModel::gemm_us(double m, double n, double k, WeightFormat f, bool* extrapolated) const {
  return gemm_use_us(make_gemm(n, k, 1, f), m, extrapolated);
}

namespace {

// An attention predictor's price when it has one (read returns < 0 where it cannot price the batch): its value
// times the table's scale, the predictor's approximation flag passed on.
template <class Read>
bool from_grid(bool ok, bool approx, double scale, bool* extrapolated, Read read, double& out) {
  if (!ok) return false;
  bool ex = approx;
  const double v = read(&ex);
  if (v < 0) return false;
  if (extrapolated && ex) *extrapolated = true;
  out = v * scale;
  return true;
}

}  // namespace

double TableCostModel::prefill_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated) const {
  if (chunks.empty()) return 0;
  double v = -1;
  if (from_grid(prefill_.ok(), prefill_approx_, prefill_scale_, extrapolated,
                [&](bool* ex) { return prefill_.prefill_us(chunks, ex); }, v))
    return v;
  const double roof = roofline_.prefill_attention_ns(chunks) / 1e3;
  if (!curves_.ok) return roof;
  double tokens = 0;
  for (const PrefillChunk& c : chunks) tokens += c.q;
  return roof * curves_.attn_prefill.eval(std::max(tokens, 1.0));
}

double TableCostModel::decode_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated) const {
  if (contexts.empty()) return 0;
  double v = -1;
  if (from_grid(decode_.ok(), decode_approx_, decode_scale_, extrapolated,
                [&](bool* ex) { return decode_.decode_us(contexts, ex); }, v))
    return v;
  double sum = 0;
  for (std::int32_t c : contexts) sum += c;
  const double roof = roofline_.decode_attention_ns(sum) / 1e3;
  if (!curves_.ok) return roof;
  return roof * curves_.attn_decode.eval(std::max(sum, 1.0));
}

double TableCostModel::prefill_window_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated) const {
  if (chunks.empty()) return 0;
  double v = -1;
  if (from_grid(prefill_win_.ok(), prefill_win_approx_, prefill_win_scale_, extrapolated,
                [&](bool* ex) { return prefill_win_.prefill_us(chunks, ex); }, v))
    return v;
  if (extrapolated) *extrapolated = true;
  const std::int64_t w = m_.sliding_window;
  if (!curves_.attn_prefill_window.empty()) {
    // No window grid (A100, datasheet GPUs, windows no table measures): the uniform batch with the same windowed
    // (query, key) pairs per request, priced as full attention on this GPU and scaled by the measured window / full
    // ratio at its length (efficiency.json; at 8192 tokens over a 128 window, 0.18).
    double pairs = 0;
    for (const PrefillChunk& c : chunks)
      pairs += uniform_pairs(w, static_cast<double>(c.context)) - uniform_pairs(w, static_cast<double>(c.context - c.q));
    const double s = uniform_length_for_pairs(w, pairs / static_cast<double>(chunks.size()));
    const auto len = static_cast<std::int32_t>(std::max(1.0, std::round(s)));
    const std::vector<PrefillChunk> uniform(chunks.size(), PrefillChunk{len, len});
    return prefill_attention_us(uniform, nullptr) * curves_.attn_prefill_window.eval(s / static_cast<double>(w));
  }
  // Without the ratio: the full-attention predictor on the keys some row of each chunk sees (the window before the
  // chunk and the chunk itself), an overestimate for prompts far beyond the window.
  std::vector<PrefillChunk> capped(chunks);
  for (PrefillChunk& c : capped) c.context = std::min<std::int64_t>(c.context, c.q + std::max<std::int64_t>(0, w - 1));
  return prefill_attention_us(capped, nullptr);
}

double TableCostModel::decode_window_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated) const {
  if (contexts.empty()) return 0;
  double v = -1;
  if (from_grid(decode_win_.ok(), decode_win_approx_, decode_win_scale_, extrapolated,
                [&](bool* ex) { return decode_win_.decode_us(contexts, ex); }, v))
    return v;
  // No window grid: a decode step reads at most the window's keys.
  std::vector<std::int32_t> capped(contexts);
  const std::int32_t w = static_cast<std::int32_t>(m_.sliding_window);
  for (std::int32_t& c : capped) c = std::min(c, w);
  if (extrapolated) *extrapolated = true;
  return decode_attention_us(capped, nullptr);
}

double TableCostModel::prefill_attention_layers_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated) const {
  if (sliding_layers_ <= 0) return layers_total_ * prefill_attention_us(chunks, extrapolated);
  return full_layers_ * prefill_attention_us(chunks, extrapolated) +
         sliding_layers_ * prefill_window_attention_us(chunks, extrapolated);
}

double TableCostModel::decode_attention_layers_us(const std::vector<std::int32_t>& contexts, bool* extrapolated) const {
  if (sliding_layers_ <= 0) return layers_total_ * decode_attention_us(contexts, extrapolated);
  return full_layers_ * decode_attention_us(contexts, extrapolated) +
         sliding_layers_ * decode_window_attention_us(contexts, extrapolated);
}

double TableCostModel::moe_us(std::int64_t tokens, const std::vector<std::int64_t>& loads, bool* extrapolated) const {
  if (tokens <= 0) return 0;
  if (moe_.ok()) return moe_.us(tokens, loads, extrapolated);
  double roof = roofline_.moe_experts_ns(static_cast<double>(tokens)) / 1e3;
  if (!loads.empty() && p_.ep_ffn > 1) {
    // The datasheet prices balanced routing; the per-rank model scales it to this assignment's slowest rank.
    std::vector<std::int64_t> ref;
    moe_balanced_loads(tokens, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), ref);
    const double base = moe_slowest_rank(moe_rank_, ref, p_.ep_ffn);
    if (base > 0) roof *= moe_slowest_rank(moe_rank_, loads, p_.ep_ffn) / base;
  }
  if (!curves_.ok || curves_.moe.empty()) return roof;
  return roof * curves_.moe.eval(static_cast<double>(tokens));
}

double TableCostModel::qk_norm_all_reduces_us(double tokens, bool graph) const {
  if (!m_.qk_norm_across_heads || p_.tp_attn <= 1 || tokens <= 0) return 0;
  // One per layer: q's and k's sums of squares concatenated, two fp32 values per token (counted in 16-bit elements
  // as the tables are). vLLM's MiniMaxText01RMSNormTP.forward_qk reduces both at once since its PR 31493 (December
  // 2025; SGLang's PR 14416 likewise); before, q_norm and k_norm each ran their own all-reduce.
  return layers_total_ * all_reduce_on(4 * tokens, p_.tp_attn, graph, nullptr);
}

double TableCostModel::pipeline_hop_us(double tokens, bool* extrapolated) const {
  if (p_.pp <= 1 || tokens <= 0) return 0;
  const double elements = tokens * static_cast<double>(m_.hidden_size);  // one whole tensor
  const int tp = p_.tp_attn;
  if (!hop_.split_over_tp || tp <= 1) return hop_.tensors * pipeline_send_us(elements * 2, extrapolated);
  double gather = 0;
  if (const CollectiveTime t = collectives_.nccl("all_gather", elements, tp); t.ok) {
    if (extrapolated && t.extrapolated) *extrapolated = true;
    gather = t.us;
  } else {
    gather = roofline_.all_gather_ns(elements * 2, tp) / 1e3;
  }
  return hop_.tensors * (pipeline_send_us(elements * 2 / tp, extrapolated) + gather);
}

double TableCostModel::pipeline_send_us(double bytes, bool* extrapolated) const {
  if (!p2p_hop_.empty()) {
    // The collectives' rule for a measured size curve (64 MiB is the largest measured message).
    const CollectiveTime t = CollectiveModel::lookup(p2p_hop_, bytes);
    if (extrapolated && t.extrapolated) *extrapolated = true;
    return t.us;
  }
  return roofline_.pipeline_send_ns(bytes) / 1e3;
}

double TableCostModel::all_reduce_us(double elements, bool graph, bool* extrapolated) const {
  return all_reduce_on(elements, p_.tp_attn, graph, extrapolated);
}

double TableCostModel::all_reduce_on(double elements, int gpus, bool graph, bool* extrapolated) const {
  if (gpus <= 1 || elements <= 0) return 0;
  const CollectiveTime t = collectives_.all_reduce(elements, gpus, graph);
  if (t.ok) {
    if (extrapolated && t.extrapolated) *extrapolated = true;
    return t.us;
  }
  const double roof = roofline_.all_reduce_ns(elements * 2, gpus) / 1e3;
  if (!curves_.ok) return roof;
  return roof * curves_.all_reduce.eval(elements * 2);
}

double TableCostModel::all_to_all_us(std::int64_t tokens, bool* extrapolated) const {
  const int ep = p_.ep_ffn;
  if (!m_.is_moe() || ep <= 1 || tokens <= 0) return 0;
  const double elements = static_cast<double>(tokens) * static_cast<double>(m_.num_experts_per_tok) *
                          static_cast<double>(m_.hidden_size) / ep;  // 16-bit values each rank sends
  if (ep <= 8 && ep <= g_.gpus_per_node) {
    const CollectiveTime t = collectives_.nccl("alltoall", elements, ep);
    if (t.ok) {
      if (extrapolated && t.extrapolated) *extrapolated = true;
      return t.us;
    }
  }
  // No measurement for this group (beyond one node, or a GPU without an NCCL table): the datasheet link.
  if (extrapolated) *extrapolated = true;
  return roofline_.all_to_all_ns(static_cast<double>(tokens)) / 1e3;
}

double TableCostModel::deepep_us(std::int64_t tokens_per_rank, bool prefill, bool* extrapolated) const {
  if (!use_deepep_ || tokens_per_rank <= 0) return 0;
  const DeepEpTable& t = prefill ? deepep_normal_ : deepep_ll_;
  bool ex = p_.ep_ffn != kDeepEpMeasuredRanks;  // another EP size than measured: the 8-rank curve as it is
  const double us = t.us(DeepEpPhase::kDispatch, static_cast<double>(tokens_per_rank), &ex) +
                    t.us(DeepEpPhase::kCombine, static_cast<double>(tokens_per_rank), &ex);
  if (extrapolated && ex) *extrapolated = true;
  return us;
}

MoeLayerTime TableCostModel::moe_layer(std::int64_t tokens, const std::vector<std::int64_t>& loads,
                                       bool* extrapolated) const {
  MoeLayerTime t;
  bool ex = false;
  t.dispatch_us = t.combine_us = all_to_all_us(tokens, &ex);
  if (extrapolated && ex) *extrapolated = true;
  t.experts_us = moe_us(tokens, loads, extrapolated);
  return t;
}

double TableCostModel::elementwise_us(double tokens) const {
  return elementwise_attn_us(tokens) + elementwise_ffn_us(tokens);
}

// Memory-bound kernels per layer, each its bytes at the achieved HBM bandwidth plus a fixed kernel time:
// two fused residual-add + RMSNorm (read x and residual, write both) and rotary embedding on q and k on the
// attention side; the SiLU-and-mul of dense layers (read gate and up, write the product) on the FFN side.
// A QK RMSNorm reads and writes q and k once more: per head in the backend's qk_norm_kernels (none where the norm
// is fused with RoPE); over all heads (qk_norm_across_heads) in two kernels, the sum of squares that the TP
// all-reduce combines (one more read) and the scaling after it.
double TableCostModel::elementwise_attn_us(double tokens) const {
  const double H = static_cast<double>(m_.hidden_size);
  const double a = 2.0;  // 16-bit activations
  const double fixed = roofline_.constants().kernel_fixed_us;
  const double norm = 2 * (roofline_.memory_ns(4 * tokens * H * a) / 1e3 + fixed);
  const double qk_bytes = tokens * (heads_local_ + kv_heads_local_) * static_cast<double>(m_.head_dim) * a;
  const double rope = roofline_.memory_ns(2 * qk_bytes) / 1e3 + fixed;
  const double qk_norm = qk_norm_kernels_ == 0 ? 0
                         : roofline_.memory_ns((qk_norm_kernels_ + 1) * qk_bytes) / 1e3 + qk_norm_kernels_ * fixed;
  return layers_total_ * (norm + rope + qk_norm);
}

double TableCostModel::elementwise_ffn_us(double tokens) const {
  if (dense_layers_total_ <= 0) return 0;
  const double a = 2.0;
  const double fixed = roofline_.constants().kernel_fixed_us;
  const double inter = static_cast<double>(m_.intermediate_size) / p_.tp_ffn;
  return dense_layers_total_ * (roofline_.memory_ns(3 * tokens * inter * a) / 1e3 + fixed);
}

// --------------------------------------------------------------------------------------------- pricing

TableCostModel::PerTokens TableCostModel::compute_per_tokens(std::int64_t tokens) const {
  PerTokens pt;
  const double Td = static_cast<double>(tokens);
  const double L = layers_total_;
  const double H = static_cast<double>(m_.hidden_size);
  double gemm = 0;
  gemm += projections_all_layers_us(L, Td, &pt.ex_gemm);
  for (const GemmUse& g : dense_gemms_) gemm += dense_layers_total_ * g.count * gemm_use_us(g, Td, &pt.ex_gemm);
  for (const GemmUse& g : moe_gemms_) gemm += moe_layers_total_ * g.count * gemm_use_us(g, Td, &pt.ex_gemm);
  pt.gemm = gemm;
  pt.norm = elementwise_us(Td);
  pt.embedding = roofline_.memory_ns(Td * H * 2) / 1e3 + roofline_.constants().kernel_fixed_us;
  if (p_.tp_attn > 1) {
    // An all-reduce after attention and after the FFN in every layer, and one after the vocab-parallel embedding.
    pt.ar_graph = (2 * L + 1) * all_reduce_us(Td * H, true, &pt.ex_ar_graph) + qk_norm_all_reduces_us(Td, true);
    pt.ar_eager = (2 * L + 1) * all_reduce_us(Td * H, false, &pt.ex_ar_eager) + qk_norm_all_reduces_us(Td, false);
  }
  return pt;
}

const TableCostModel::PerTokens& TableCostModel::per_tokens(std::int64_t tokens) {
  static constexpr std::int64_t kMaxCached = 1 << 17;
  if (tokens < 0 || tokens >= kMaxCached) {
    scratch_ = compute_per_tokens(tokens);
    return scratch_;
  }
  if (static_cast<std::size_t>(tokens) >= per_tokens_.size())
    per_tokens_.resize(static_cast<std::size_t>(tokens) + 1);
  PerTokens& pt = per_tokens_[static_cast<std::size_t>(tokens)];
  if (pt.gemm < 0) pt = compute_per_tokens(tokens);
  return pt;
}

BatchCost TableCostModel::price(const BatchShape& s) {
  if (part_ != CostPart::kWhole || p_.dp_attn > 1) return price_parts(s);
  double us[static_cast<int>(OpFamily::kCount)] = {};
  auto fam = [&us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const std::int64_t T = s.num_tokens + s.padded_tokens;
  const double Td = static_cast<double>(T);

  // Token-only costs (GEMMs, elementwise, embedding, all-reduce), memoised per token count.
  const bool piecewise = !s.cuda_graph && !e_.enforce_eager && T <= max_capture_;
  const bool in_graph = s.cuda_graph || piecewise;
  {
    const PerTokens& pt = per_tokens(T);
    fam(OpFamily::kGemm) = pt.gemm;
    count(OpFamily::kGemm, pt.ex_gemm);
    fam(OpFamily::kNorm) = pt.norm;
    fam(OpFamily::kEmbedding) = pt.embedding;
    if (p_.tp_attn > 1) {
      fam(OpFamily::kAllReduce) = in_graph ? pt.ar_graph : pt.ar_eager;
      count(OpFamily::kAllReduce, in_graph ? pt.ex_ar_graph : pt.ex_ar_eager);
    }
  }
  {
    const int rows = std::max(1, s.num_sampled);
    if (static_cast<std::size_t>(rows) >= lm_head_cache_.size()) {
      lm_head_cache_.resize(static_cast<std::size_t>(rows) + 1, -1.0);
      lm_head_ex_.resize(static_cast<std::size_t>(rows) + 1, 0);
    }
    if (lm_head_cache_[static_cast<std::size_t>(rows)] < 0) {
      bool ex = false;
      lm_head_cache_[static_cast<std::size_t>(rows)] = gemm_use_us(lm_head_, static_cast<double>(rows), &ex);
      lm_head_ex_[static_cast<std::size_t>(rows)] = ex ? 1 : 0;
    }
    fam(OpFamily::kLmHead) = lm_head_cache_[static_cast<std::size_t>(rows)];
    count(OpFamily::kLmHead, lm_head_ex_[static_cast<std::size_t>(rows)] != 0);
  }
  if (m_.is_moe() && moe_layers_total_ > 0) {
    // Per MoE layer: dispatch all-to-all, the slowest EP rank's experts, then the combine (moe_model.h).
    moe_loads(routing_, alpha_, T, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), rng_,
              loads_);
    bool ex = false;
    fam(OpFamily::kMoe) = moe_layers_total_ * moe_us(T, loads_, &ex);
    count(OpFamily::kMoe, ex);
    // No all-to-all here: with TP attention (dp_attn = 1) every rank holds every token after the attention
    // all-reduce, each EP rank runs its own experts on the tokens routed to them, and the layer's closing
    // all-reduce over the whole group is the combine (priced with the all-reduces above).
  }
  if (!s.prefills.empty()) {
    bool ex = false;
    fam(OpFamily::kAttentionPrefill) = prefill_attention_layers_us(s.prefills, &ex);
    count(OpFamily::kAttentionPrefill, ex);
  }
  if (s.num_decode > 0) {
    bool ex = false;
    if (!s.decode_contexts.empty()) {
      fam(OpFamily::kAttentionDecode) = decode_attention_layers_us(s.decode_contexts, &ex);
    } else {  // a shape built without per-request lengths: the mean length for every request
      std::vector<std::int32_t> ctx(static_cast<std::size_t>(s.num_decode),
                                    static_cast<std::int32_t>(s.decode_context_sum / std::max(1, s.num_decode)));
      fam(OpFamily::kAttentionDecode) = decode_attention_layers_us(ctx, &ex);
    }
    count(OpFamily::kAttentionDecode, ex);
  }
  if (p_.pp > 1) {
    bool ex = false;
    fam(OpFamily::kPipelineP2p) = (p_.pp - 1) * pipeline_hop_us(Td, &ex);
    count(OpFamily::kPipelineP2p, ex);
  }
  return finish(us, s, piecewise);
}

BatchCost TableCostModel::price_parts(const BatchShape& s) {
  double us[static_cast<int>(OpFamily::kCount)] = {};
  auto fam = [&us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const std::int64_t T = s.num_tokens + s.padded_tokens;
  const double Td = static_cast<double>(T);
  const double L = layers_total_;
  const double H = static_cast<double>(m_.hidden_size);
  const bool piecewise = !s.cuda_graph && !e_.enforce_eager && T <= max_capture_;
  const bool in_graph = s.cuda_graph || piecewise;
  if (part_ != CostPart::kFfn) {
    // Attention domain: each data-parallel attention group (dp_attn) runs the qkv/o projections, attention,
    // norms, its TP all-reduces, the embedding and the LM head on its own requests; the slowest group decides.
    split_batch(s, p_.dp_attn, groups_);
    double best = -1;
    double pick[static_cast<int>(OpFamily::kCount)] = {};
    bool ex[static_cast<int>(OpFamily::kCount)] = {};
    double hop_tokens = 0;  // each group hands its own tokens to the next stage, in parallel: the largest decides
    for (const BatchShape& g : groups_) {
      double f[static_cast<int>(OpFamily::kCount)] = {};
      bool e[static_cast<int>(OpFamily::kCount)] = {};
      auto at = [&f](OpFamily x) -> double& { return f[static_cast<int>(x)]; };
      auto ex_at = [&e](OpFamily x) -> bool* { return &e[static_cast<int>(x)]; };
      const double Tg = static_cast<double>(g.num_tokens + g.padded_tokens);
      hop_tokens = std::max(hop_tokens, Tg);
      at(OpFamily::kGemm) += projections_all_layers_us(L, Tg, ex_at(OpFamily::kGemm));
      at(OpFamily::kNorm) = elementwise_attn_us(Tg);
      at(OpFamily::kEmbedding) = roofline_.memory_ns(Tg * H * 2) / 1e3 + roofline_.constants().kernel_fixed_us;
      at(OpFamily::kLmHead) =
          gemm_use_us(lm_head_, static_cast<double>(std::max(1, g.num_sampled)), ex_at(OpFamily::kLmHead));
      if (!g.prefills.empty()) at(OpFamily::kAttentionPrefill) = prefill_attention_layers_us(g.prefills, ex_at(OpFamily::kAttentionPrefill));
      if (g.num_decode > 0) at(OpFamily::kAttentionDecode) = decode_attention_layers_us(g.decode_contexts, ex_at(OpFamily::kAttentionDecode));
      // An all-reduce after attention in every layer and one after the vocab-parallel embedding.
      at(OpFamily::kAllReduce) = (L + 1) * all_reduce_on(Tg * H, p_.tp_attn, in_graph, ex_at(OpFamily::kAllReduce)) +
                                 qk_norm_all_reduces_us(Tg, in_graph);
      double sum = 0;
      for (double v : f) sum += v;
      if (sum > best) {
        best = sum;
        for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) {
          pick[i] = f[i];
          ex[i] = e[i];
        }
      }
    }
    for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) us[i] = pick[i];
    for (OpFamily x : {OpFamily::kGemm, OpFamily::kLmHead, OpFamily::kAllReduce}) count(x, ex[static_cast<int>(x)]);
    if (!s.prefills.empty()) count(OpFamily::kAttentionPrefill, ex[static_cast<int>(OpFamily::kAttentionPrefill)]);
    if (s.num_decode > 0) count(OpFamily::kAttentionDecode, ex[static_cast<int>(OpFamily::kAttentionDecode)]);
    if (p_.pp > 1) {
      bool ex = false;
      fam(OpFamily::kPipelineP2p) = (p_.pp - 1) * pipeline_hop_us(hop_tokens, &ex);
      count(OpFamily::kPipelineP2p, ex);
    }
  }
  if (part_ != CostPart::kAttention) {
    // FFN domain: every token of the replica through the dense FFN or the router, shared expert and routed
    // experts (tp_ffn x ep_ffn), an all-reduce over tp_ffn after it.
    bool ex = false;
    double gemm = 0;
    for (const GemmUse& g : dense_gemms_) gemm += dense_layers_total_ * g.count * gemm_use_us(g, Td, &ex);
    for (const GemmUse& g : moe_gemms_) gemm += moe_layers_total_ * g.count * gemm_use_us(g, Td, &ex);
    fam(OpFamily::kGemm) += gemm;
    count(OpFamily::kGemm, ex);
    fam(OpFamily::kNorm) += elementwise_ffn_us(Td);
    if (m_.is_moe() && moe_layers_total_ > 0) {
      moe_loads(routing_, alpha_, T, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), rng_,
                loads_);
      bool ex_moe = false, ex_a2a = false;
      fam(OpFamily::kMoe) = moe_layers_total_ * moe_us(T, loads_, &ex_moe);
      count(OpFamily::kMoe, ex_moe);
      // Dispatch and combine all-to-all when tokens are partitioned over DP attention groups. On an F role the
      // A->F / F->A activation transfers (afd_cost_model) are the dispatch and combine.
      if (p_.ep_ffn > 1 && p_.dp_attn > 1 && part_ == CostPart::kWhole) {
        if (use_deepep_) {
          // SGLang with DeepEP: every rank dispatches the tokens of its DP attention group (split over the group's
          // tp_attn ranks), and the collective waits for the busiest rank, so the largest group sets the size.
          // --deepep-mode auto (SGLang's default) runs normal mode when any rank has prefill tokens in the step
          // (is_extend_in_batch is gathered over the DP ranks) and low-latency mode for decode-only steps.
          std::int64_t rank_tokens = 0;
          for (const BatchShape& g : groups_) rank_tokens = std::max(rank_tokens, g.num_tokens + g.padded_tokens);
          rank_tokens = (rank_tokens + p_.tp_attn - 1) / p_.tp_attn;
          fam(OpFamily::kAllToAll) = moe_layers_total_ * deepep_us(rank_tokens, !s.prefills.empty(), &ex_a2a);
        } else {
          fam(OpFamily::kAllToAll) = moe_layers_total_ * 2 * all_to_all_us(T, &ex_a2a);
        }
        count(OpFamily::kAllToAll, ex_a2a);
      }
    }
    if (p_.tp_ffn > 1) {
      bool ex_ar = false;
      fam(OpFamily::kAllReduce) += L * all_reduce_on(Td * H, p_.tp_ffn, in_graph, &ex_ar);
      count(OpFamily::kAllReduce, ex_ar);
    }
  }
  return finish(us, s, piecewise);
}

BatchCost TableCostModel::finish(double* us, const BatchShape& s, bool piecewise) const {
  auto fam = [us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const double L = layers_total_;
  BatchCost c;
  // Launch-inclusive timing: a layer cannot run faster than the host launches its kernels (eager: every
  // kernel; piecewise: the graph pieces around attention; full graph: one replay, kernels only).
  // The FFN side of an A/F pair only executes what arrives: its host cost is the attention side's.
  if (part_ == CostPart::kFfn) {
    for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
      c.by_family[f] = static_cast<SimTime>(us[f] * 1e3 + 0.5);
      c.total += c.by_family[f];
    }
    return c;
  }
  const int launches = s.cuda_graph ? 0 : (piecewise ? 3 : k_.kernels_per_layer + qk_norm_kernels_);
  double gpu = 0;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) gpu += us[f];
  double launch_wait_us = 0;
  if (launches > 0 && L > 0) {
    const double floor_us = L * launches * k_.launch_us;
    if (floor_us > gpu) launch_wait_us = floor_us - gpu;
  }
  const double host = k_.cpu_iteration_us +
                      k_.cpu_per_request_us * (s.num_decode + static_cast<double>(s.prefills.size())) +
                      k_.cpu_per_token_us * static_cast<double>(s.num_tokens);
  const double overhead = launch_wait_us + exposed_host_time(host, gpu + launch_wait_us, async_host_);
  fam(OpFamily::kOverhead) = overhead;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    c.by_family[f] = static_cast<SimTime>(us[f] * 1e3 + 0.5);
    c.total += c.by_family[f];
  }
  // Each stage's host launches its own layers' kernels, so the launch wait is spread over the stages.
  split_pipeline(c, p_.pp, static_cast<SimTime>(launch_wait_us * 1e3 + 0.5));
  return c;
}

// --------------------------------------------------------------------------------------------- reporting

std::vector<std::string> TableCostModel::tables_lacking() const {
  std::vector<std::string> out;
  auto lacks = [this](OpFamily f) { return source_[static_cast<int>(f)] != PriceSource::kTable; };
  if (lacks(OpFamily::kGemm) || lacks(OpFamily::kLmHead)) out.push_back("gemm");
  if (lacks(OpFamily::kAttentionPrefill)) out.push_back(m_.is_mla() ? "mla_context" : "context_attention");
  if (lacks(OpFamily::kAttentionDecode)) out.push_back(m_.is_mla() ? "mla_generation" : "generation_attention");
  if (m_.is_moe() && lacks(OpFamily::kMoe)) out.push_back("moe");
  if (p_.tp_attn > 1 && lacks(OpFamily::kAllReduce)) out.push_back("nccl");
  if (sliding_layers_ > 0 && !(prefill_win_.ok() && decode_win_.ok())) {
    out.push_back("context_attention_window");
    out.push_back("generation_attention_window");
  }
  return out;
}

std::string TableCostModel::describe() const {
  const bool tables = t_.any();
  std::string d;
  if (tables) {
    d = "measured tables " + t_.gpu + "/" + t_.table_backend + " (" + t_.table_backend + " " + t_.backend_version +
        ", AIConfigurator)";
    if (t_.table_backend != e_.backend) d += " for backend " + e_.backend;
    if (!t_.transferred_to.empty())
      d = "datasheet-derived: " + d + " moved to the " + t_.transferred_to + " datasheet (" +
          (t_.transfer_rule == TransferRule::kSameArchitecture
               ? "same architecture: each cell's roofline time re-priced, the rest kept"
               : "other architecture: each cell scaled by the ratio of the rooflines") +
          ")";
  } else {
    d = curves_.ok ? "datasheet-derived: " + g_.name + " roofline corrected by efficiency curves fitted on H100/H200/A100"
                   : "roofline from the " + g_.name + " datasheet";
  }
  std::string rest;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    const auto fam = static_cast<OpFamily>(f);
    if (fam == OpFamily::kOverhead || (fam == OpFamily::kMoe && !m_.is_moe()) || fam == OpFamily::kAfTransfer ||
        (fam == OpFamily::kAllToAll && (!m_.is_moe() || p_.ep_ffn <= 1)))
      continue;
    if (source_[f] != PriceSource::kTable && tables) rest += std::string(rest.empty() ? "" : ", ") + op_family_name(fam);
  }
  if (mla_prefill_.ok() || mla_decode_.ok()) {
    // Name the MLA source: module tables (kernels joined) minus the capped GEMM-table projections, or kernel tables.
    auto name = [](const MlaModuleGrid& g) {
      return "[" + g.kernels + " " + g.kv_dtype + " kv, " + (g.module ? g.gemm_type + ", " : "") + key_int(g.heads) +
             " heads]";
    };
    const bool module = (mla_prefill_.ok() && mla_prefill_.module) || (mla_decode_.ok() && mla_decode_.module);
    d += module ? "; MLA attention from module tables" : "; MLA attention from kernel tables";
    if (mla_prefill_.ok()) d += " mla_context" + name(mla_prefill_);
    if (mla_decode_.ok()) d += " mla_generation" + name(mla_decode_);
    d += module ? " minus GEMM-table projections (capped by the modules)" : ", projections from the GEMM table";
  }
  if (use_deepep_)
    d += "; EP all-to-all from SGLang DeepEP tables " + (t_.deepep_from.empty() ? t_.gpu : t_.deepep_from) + "/sglang" +
         (t_.deepep_from.empty() ? "" : " moved to the " + g_.name + " datasheet") + " (" +
         t_.deepep_normal.backend_version + ", normal mode [" + deepep_normal_.describe() +
         "] with prefill tokens, low-latency [" + deepep_ll_.describe() + "] without)";
  if (!p2p_hop_.empty())
    d += std::string("; pipeline hops (hidden states and residual, ") +
         (hop_.split_over_tp && p_.tp_attn > 1 ? "1/tp per rank, all-gathered" : "whole") +
         ") from NCCL send/recv measured " + (hop_intra_node_ ? "within one " : "across two ") + t_.gpu +
         (hop_intra_node_ ? " node" : " nodes") + " (" + t_.p2p.source_file + ", Vidur)";
  if (sliding_layers_ > 0)
    d += std::string("; sliding-window layers (window ") + key_int(m_.sliding_window) + ") from " +
         (prefill_win_.ok() && decode_win_.ok() ? "the window tables" : "the full-attention tables on the window's keys");
  if (formats_.from_checkpoint)
    d += std::string("; checkpoint weights: attention ") + weight_format_name(formats_.attention) + ", experts " +
         weight_format_name(formats_.experts) + (moe_dtype_.empty() ? "" : " (moe grid " + moe_dtype_ + ")");
  for (const ProfileTables::Supplement& sup : t_.supplements) {
    std::string names;
    for (const std::string& n : sup.tables) names += (names.empty() ? "" : ", ") + n;
    d += "; " + names + " grids the " + t_.gpu + " tables lack from " + sup.from + " (" + transfer_rule_name(sup.rule) +
         ")";
  }
  if (!rest.empty()) d += "; not in the tables: " + rest;
  d += "; cpu overhead calibrated (" + e_.backend + ")";
  return d;
}

FidelityReport TableCostModel::report() const {
  FidelityReport r;
  bool table = false, datasheet = false;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    table = table || source_[f] == PriceSource::kTable;
    datasheet = datasheet || source_[f] == PriceSource::kDatasheet;
  }
  r.kind = table ? "table" : (datasheet ? "datasheet-derived" : "roofline");
  if (table) {
    r.profile = t_.gpu + "/" + t_.table_backend;
    r.profile_version = t_.backend_version;
    if (!t_.transferred_to.empty()) {
      r.kind = "datasheet-derived";
      r.transferred_to = t_.transferred_to;
      r.transfer = transfer_rule_name(t_.transfer_rule);
      for (const ProfileTables::Supplement& sup : t_.supplements)
        r.supplements.push_back({sup.from, transfer_rule_name(sup.rule), sup.tables});
    }
  } else if (datasheet) {
    r.profile = "datasheet";
  }
  r.measured_error_json = t_.validation_json;
  r.host.known = true;
  const EngineOptions::Host& o = e_.host;
  const bool overridden = o.iteration_us >= 0 || o.per_request_us >= 0 || o.per_token_us >= 0 || o.launch_us >= 0;
  r.host.source = overridden ? "engine.host" : "calibrated (" + e_.backend + ")";
  r.host.iteration_us = k_.cpu_iteration_us;
  r.host.per_request_us = k_.cpu_per_request_us;
  r.host.per_token_us = k_.cpu_per_token_us;
  r.host.launch_us = k_.launch_us;
  r.host.hidden_under_gpu = async_host_;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    if (lookups_[f] == 0) continue;
    r.families.push_back(op_family_name(static_cast<OpFamily>(f)));
    r.lookups.push_back(lookups_[f]);
    r.extrapolated.push_back(extrapolated_[f]);
  }
  return r;
}

std::unique_ptr<CostModel> make_cost_model(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                                           const EngineOptions& engine, const ResourceCatalog* catalog,
                                           std::uint64_t seed, std::string& error, CostPart part) {
  if (!catalog) {
    auto r = std::make_unique<RooflineCostModel>(model, gpu, par, engine);
    r->set_part(part);
    return r;
  }
  const std::string& backend = engine.backend;
  ProfileTables tables;
  if (!load_role_tables(*catalog, gpu, backend, model, engine.moe_a2a_backend == "deepep", tables, error))
    return nullptr;
  EfficiencyCurves curves;
  load_efficiency_curves(*catalog, curves);
  if (tables.transferred_to.empty()) {
    auto own = std::make_unique<TableCostModel>(model, gpu, par, engine, std::move(tables), std::move(curves), seed);
    own->set_part(part);
    return own;
  }
  // Moved tables that lack a format or head size this role needs: the next GPUs' grids, before the curves.
  auto t = std::make_unique<TableCostModel>(model, gpu, par, engine, tables, curves, seed);
  std::vector<std::string> tried = {tables.gpu};
  for (auto lacking = t->tables_lacking(); !lacking.empty(); lacking = t->tables_lacking()) {
    if (!supplement_role_tables(*catalog, gpu, backend, model, lacking, tried, tables, error)) {
      if (!error.empty()) return nullptr;
      break;
    }
    t = std::make_unique<TableCostModel>(model, gpu, par, engine, tables, curves, seed);
  }
  t->set_part(part);
  return t;
}

}  // namespace servesim
