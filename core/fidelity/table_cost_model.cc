#include "core/fidelity/table_cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/fidelity/l2_warmth.h"
#include "core/fidelity/memory_model.h"
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
  // MLA keeps one latent vector per token, every rank the whole of it.
  kv_bytes_per_key_ = kv_element_bytes(e_) *
                      (m_.is_mla() ? static_cast<double>(m_.kv_lora_rank + m_.qk_rope_head_dim)
                                   : 2.0 * kv_heads_local_ * static_cast<double>(m_.head_dim));
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
  unified_attention_call_ = e_.backend == "vllm";
  if (p_.pp > 1) {
    if (const OpGrid* g = t_.p2p.find({hop_intra_node_ ? "intra_node" : "inter_node"}); g && g->axes.size() == 1) {
      p2p_hop_ = LogCurve(g->axes[0], g->values);
      if (!p2p_hop_.empty()) source_[static_cast<int>(OpFamily::kPipelineP2p)] = PriceSource::kTable;
    }
  }
  if (!m_.is_moe()) source_[static_cast<int>(OpFamily::kMoe)] = fallback;
  build_gemms();
  if (!m_.is_mla()) {
    build_attention(t_.context_attention, false, prefill_);
    build_attention(t_.generation_attention, true, decode_);
    if (sliding_layers_ > 0) {
      const int w = static_cast<int>(m_.sliding_window);
      build_attention(t_.context_attention_window, false, prefill_win_, w);
      build_attention(t_.generation_attention_window, true, decode_win_, w);
    }
  } else {
    build_mla_attention();
  }
  if (prefill_.ok()) source_[static_cast<int>(OpFamily::kAttentionPrefill)] = PriceSource::kTable;
  if (decode_.ok()) source_[static_cast<int>(OpFamily::kAttentionDecode)] = PriceSource::kTable;
  build_moe();
  // The backend's all-reduce table (vLLM's dispatcher, TRT-LLM AUTO) on fully NVLinked 2/4/6/8 GPU groups, its
  // eager variant only up to vLLM's custom kernel's 8 MiB buffer (CollectiveModel::all_reduce); NCCL beyond its sizes.
  // SGLang runs the same custom kernel (its custom_all_reduce is vLLM's, on unless --disable-custom-all-reduce, 8 MiB
  // buffer) and prices it from vLLM's table like its other kernels; above the buffer its dispatch goes to NCCL, not
  // to the symmetric-memory path vLLM's table measured there.
  const bool custom_ok = g_.nvlink_gb_s > 0 && p_.tp_attn <= g_.gpus_per_node && p_.tp_attn % 2 == 0 &&
                         p_.tp_attn <= 8;
  collectives_.set_tables(t_.nccl.empty() ? nullptr : &t_.nccl,
                          t_.custom_allreduce.empty() || !custom_ok ? nullptr : &t_.custom_allreduce,
                          kVllmCustomAllReduceBytes,
                          /*beyond_buffer=*/e_.backend != "sglang",
                          /*split_at_buffer=*/t_.custom_allreduce_nccl_at_buffer);
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
  GemmUse g;
  g.weights = f;
  f = math_format(f);
  g.count = count;
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
  g.grid = grid != nullptr;
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

void TableCostModel::build_attention(const OpTable& t, bool decode, GridAttention& out, int window) {
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
  out.approx = false;
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
    out.approx = true;
  }
  const int sms = g_.sm_count > 0 ? g_.sm_count : 132;
  AttentionGeometry geo = table_grid_geometry(*best, sms, decode, window);
  // vLLM passes FlashAttention-3 its static split count only in full-graph mode, for calls up to the largest capture;
  // the split kernel's output traffic is priced at this GPU's HBM bandwidth (decode and prefill calls).
  if (geo.fa3_num_splits > 0) geo.fa3_num_splits_max_tokens = max_capture_;
  geo.split_out_us_per_element = fa3_split_out_us_per_element(g_.hbm_tb_s, roofline_.constants().memory_efficiency);
  out.scale = static_cast<double>(heads) / geo.heads;
  // The tables were timed with the call's K and V left in L2 by the call before; serving reads them cold. The
  // predictor reads a decode grid as if cold (read_cold), at the grid's own K and V bytes per key.
  const bool cold = decode && t_.l2.ok();
  auto prepare = [&](const OpGrid& g) {
    return cold ? read_cold(g, t_.l2, grid_kv_bytes_per_key(g), g.key.size() > 4 ? std::atoi(g.key[4].c_str()) : 0)
                : g;
  };
  if (decode && fa2_decode(geo)) set_fa2_hbm_ctas(geo, fit_fa2_hbm_ctas(t, sms, prepare));
  if (!cold) {
    out.p.build(*best, decode, geo, /*choose=*/true);
    return;
  }
  out.p.build_owned(prepare(*best), decode, geo, /*choose=*/true);
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
  auto build = [&](const MlaModuleGrid& grid, const OpGrid& cells, bool decode, GridAttention& out) {
    // The work model's FlashAttention tiling stands in for FlashMLA's (one latent KV head, split-KV decode): it
    // supplies the mixed-batch composition effect around the measured uniform cells (an approximation).
    AttentionGeometry geo;
    geo.heads = grid.heads;
    geo.kv_heads = 1;
    geo.sms = g_.sm_count > 0 ? g_.sm_count : 132;
    set_split_rule(geo, cells.kernel, /*mla=*/true);
    out.scale = static_cast<double>(heads) / grid.heads;
    out.approx = grid.approx;
    // MLA decode is interpolated warm and read cold after (decode_attention_us): reading the module grids cold
    // first predicted their held-out lines slightly worse (docs/validation.md).
    out.p.build(cells, decode, geo);
  };
  if (have_ctx) {
    if (mla_prefill_.module) subtract_mla_projections(mla_prefill_.grid, false, projections);
    if (mla_prefill_.decode_path.ok()) {
      // vLLM's decode-path kernel (prompts of at most its threshold) and its prefill kernel, each from its own cells.
      OpGrid shorter, longer;
      split_mla_context_grid(mla_prefill_, mla_prefill_.grid, shorter, longer);
      build(mla_prefill_, longer, false, prefill_);
      build(mla_prefill_, shorter, false, prefill_short_);
      if (prefill_short_.ok()) mla_path_ = mla_prefill_.decode_path;
    } else {
      build(mla_prefill_, mla_prefill_.grid, false, prefill_);
    }
  }
  if (have_gen) {
    if (mla_decode_.module) subtract_mla_projections(mla_decode_.grid, true, projections);
    build(mla_decode_, mla_decode_.grid, true, decode_);
  }
}

void TableCostModel::build_moe() {
  if (!m_.is_moe()) return;
  // Per-rank terms from the datasheet. The experts' weight format (weight_format.h): FP8 formats run FP8
  // tensor-core math; MXFP4 on a GPU without FP4 tensor cores is weight-only (w4a16): 4.25-bit weights dequantised
  // to 16-bit math.
  const WeightFormat fe = math_format(formats_.experts);
  moe_rank_ = moe_rank_cost(static_cast<double>(m_.hidden_size),
                            static_cast<double>(m_.moe_intermediate_size) / p_.tp_ffn,
                            weight_format_bytes(formats_.experts, m_), g_.hbm_tb_s,
                            is_fp8(fe) && g_.fp8_tflops > 0 ? g_.fp8_tflops : g_.bf16_tflops);
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
  // The grid of this distribution, else online FP8's block-scaled twin (a shape measured block-scaled only).
  auto find = [&](const std::string& distribution) {
    key[0] = dt;
    key[7] = distribution;
    const OpGrid* found = t_.moe.find(key);
    if (!found && fe == WeightFormat::kFp8) {
      key[0] = "fp8_block";
      found = t_.moe.find(key);
    }
    return found;
  };
  // Power-law routing with an exponent AIConfigurator measured prices from that curve; any other routing scales
  // the balanced curve by the model (A100, which has power-law rows only, scales its alpha 1.01 curve).
  MoeRouting ref = MoeRouting::kPowerLaw;
  double alpha = alpha_;
  const std::string measured = measured_power_law_key(alpha_);
  const OpGrid* g = routing_ == MoeRouting::kPowerLaw && !measured.empty() ? find(measured) : nullptr;
  if (!g) {
    ref = MoeRouting::kBalanced;
    g = find("balanced");
  }
  if (!g) {
    ref = MoeRouting::kPowerLaw;
    alpha = 1.01;
    g = find(measured_power_law_key(alpha));
  }
  if (!g) return;
  moe_dtype_ = g->key[0];
  moe_distribution_ = g->key[7];
  if (moe_.build(*g, ref, alpha, moe_rank_, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok),
                 p_.ep_ffn)) {
    moe_.set_batch_routing(routing_, alpha_);
    source_[static_cast<int>(OpFamily::kMoe)] = PriceSource::kTable;
  }
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
