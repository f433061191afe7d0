#pragma once
/// Prices iterations from measured operator tables (profiles/<gpu>/<backend>/, scripts/gen_tables.py).
///
/// The model is decomposed per layer under the role's parallelism exactly like the roofline; each op family is
/// then priced by its predictor:
///   gemm               GEMM table, interpolated over (n, k) once per model shape into a curve of tokens m
///   moe                fused-MoE table at the batch's tokens x the sampled-assignment slowest-rank ratio
///   attention_*        attention tables through the per-request work model (attention_model.h); decode adds its
///                      K and V read cold where the tables read them from L2 (l2_warmth.h)
///                      MLA models: the module tables minus the GEMM-table projections (capped by the modules),
///                      or the kernel tables as they are (mla_module_table.h)
///   all_reduce         the backend's all-reduce table (vLLM dispatcher, TRT-LLM AUTO; SGLang its custom kernel up to
///                      8 MiB) by message size; NCCL beyond it
///   lm_head            GEMM table (bf16, rows = sampled requests)
///   pipeline_p2p       the GPU's measured send/recv curve for the hop's placement (p2p.json), else roofline
///   norm, embedding    roofline (no measurements exist for them)
///   cpu_overhead       per-backend constants calibrated on silicon_h100.csv (docs/validation.md)
/// Any family without a usable table falls back to the datasheet: the roofline corrected by efficiency curves
/// fitted on the GPUs that have tables (profiles/datasheet/efficiency.json), "datasheet-derived" in the result.
/// Timing families: a batch replayed from a full CUDA graph costs its kernels only; piecewise-graph batches
/// (vLLM V1 mixed batches up to the largest capture size) add one launch per layer for the attention run
/// outside the graph; eager batches are launch-inclusive (a layer takes at least its kernels' launch time).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/backend_constants.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/cost_model.h"
#include "core/fidelity/deepep_table.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/mla_module_table.h"
#include "core/fidelity/moe_model.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/pipeline_hop.h"
#include "core/fidelity/profile_tables.h"
#include "core/fidelity/roofline_cost_model.h"
#include "core/fidelity/table_transfer.h"
#include "core/sim/rng.h"
#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"
#include "core/spec/weight_format.h"

namespace servesim {

class ResourceCatalog;

/// DeepEP's measured configuration (profiles/<gpu>/sglang/deepep_*.json): one collective over the 8 GPUs of an
/// H100 node, normal mode at SGLang's default 20 SMs (DeepEP Buffer.num_sms, unless --deepep-config changes it).
constexpr int kDeepEpMeasuredRanks = 8;
constexpr std::int64_t kDeepEpNormalSms = 20;

/// Table-driven pricing for one role.
class TableCostModel : public CostModel {
 public:
  /// `tables` may be empty (datasheet-derived for every family); `curves` may be !ok (plain roofline fallback).
  TableCostModel(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par, const EngineOptions& engine,
                 ProfileTables tables, EfficiencyCurves curves, std::uint64_t seed);
  BatchCost price(const BatchShape& shape) override;
  /// Tables moved from another GPU (table_transfer.h) price as "datasheet-derived".
  PriceSource source(OpFamily f) const override {
    const PriceSource s = source_[static_cast<int>(f)];
    return s == PriceSource::kTable && !t_.transferred_to.empty() ? PriceSource::kDatasheet : s;
  }
  /// Prices only the attention or the FFN domain (A/F disaggregation); kWhole by default.
  void set_part(CostPart part) { part_ = part; }
  int pipeline_stages() const override { return p_.pp; }
  std::string describe() const override;
  FidelityReport report() const override;
  /// Tables (ProfileTables::table_names) this role looked a shape up in and found no grid for: the families that
  /// fall back to the datasheet curves, and the window tables when sliding layers fall back to full attention.
  std::vector<std::string> tables_lacking() const;

  // Per-op predictors (us, one layer / one op), public for validation tools and tests.
  double gemm_us(double m, double n, double k, bool fp8, bool* extrapolated = nullptr) const;
  /// The same on the grid of one weight format (bfloat16, fp8, fp8_block).
  double gemm_us(double m, double n, double k, WeightFormat f, bool* extrapolated = nullptr) const;
  /// The weight format of each module (checkpoint quantisation, else the engine dtype; weight_format.h).
  const WeightFormats& weight_formats() const { return formats_; }
  /// The moe.json "dtype" of the grid pricing the routed experts ("" when none).
  const std::string& moe_grid_dtype() const { return moe_dtype_; }
  /// The routing the MoE grid was measured with: balanced, or power_law_1.01 / power_law_1.2 for a scenario's
  /// power-law routing with that exponent (and A100, which has only power-law rows).
  const std::string& moe_grid_distribution() const { return moe_distribution_; }
  /// `beside_decodes`: the step also decodes (on vLLM's MLA backends it decides which prompts join the decodes'
  /// call: mla_decode_path_prompts).
  double prefill_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated = nullptr,
                              bool beside_decodes = false) const;
  /// `beside_prefill`: the step also holds prompt tokens, in the same attention call where the engine runs one
  /// (vLLM's unified varlen call; AttentionGeometry::ungrouped_beside_prefill).
  double decode_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated = nullptr,
                             bool beside_prefill = false) const;
  /// One sliding-window layer (models with layer_types): the window grids through the windowed work model; without
  /// a window grid, the full-attention predictor on the keys inside the window (flagged as extrapolated).
  double prefill_window_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated = nullptr) const;
  double decode_window_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated = nullptr,
                                    bool beside_prefill = false) const;
  /// What one decode-attention call over `keys` keys in all adds for reading its K and V cold where the tables read
  /// them from L2 (l2_warmth.h; 0 when the tables are not this GPU's own or its L2 was not measured). Included in
  /// decode_attention_us / decode_window_attention_us when a grid priced them: their grids are read cold
  /// (read_cold), so a measured uniform batch prices at its measurement plus this.
  double cold_l2_us(double keys) const { return t_.l2.extra_us(keys * kv_bytes_per_key_); }
  /// Every attention layer of the stage: full layers plus sliding layers.
  double prefill_attention_layers_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated = nullptr,
                                     bool beside_decodes = false) const;
  double decode_attention_layers_us(const std::vector<std::int32_t>& contexts, bool* extrapolated = nullptr,
                                    bool beside_prefill = false) const;
  /// One step's attention, every layer: its prompt chunks (`prefill_us`) and its decodes of `contexts` keys
  /// (`decode_us`). Where vLLM's one varlen call holds only one-token prompts beside its decodes and the decode grid
  /// measures this geometry with FlashAttention-2 (one_token_prompts_decode()), the call is FlashAttention-2's
  /// decode path over every request: priced once by the decode grid, the prompts as decodes of their context, in
  /// `decode_us` when the step has decodes and in `prefill_us` when it has none.
  void step_attention_us(const std::vector<PrefillChunk>& prefills, const std::vector<std::int32_t>& contexts,
                         bool* ex_prefill, bool* ex_decode, double& prefill_us, double& decode_us) const;
  /// The step's prompt chunks are all one token and run in FlashAttention-2's decode path with its decodes (see
  /// step_attention_us). A100's vLLM tables, 1 token against 2 keys: the context grid's one-token column equals the
  /// generation grid within 0.7% (median of 329 cells; p95 2.3%).
  bool one_token_prompts_decode(const std::vector<PrefillChunk>& prefills) const;
  /// One attention layer's projections (qkv and o; MLA: q_a/kv_a, q_b, kv_b, o) at `tokens`, capped by the MLA
  /// module measurements where the role has them.
  double attention_projections_us(double tokens, bool* extrapolated = nullptr) const;
  /// One MoE layer for `tokens` tokens with the given expert loads (empty = the reference routing).
  double moe_us(std::int64_t tokens, const std::vector<std::int64_t>& loads, bool* extrapolated = nullptr) const;
  double all_reduce_us(double elements, bool graph, bool* extrapolated = nullptr) const;
  /// The TP all-reduces of QK norms over all heads (ModelSpec::qk_norm_across_heads), all layers, us.
  double qk_norm_all_reduces_us(double tokens, bool graph) const;
  /// One EP all-to-all (dispatch or combine) of `tokens` tokens' routed rows, T x topk x hidden x 2 bytes / ep per
  /// rank: the NCCL alltoall table where the EP group fits in a node (<= 8 GPUs), else the GPU's link bandwidth
  /// from the datasheet (counted as extrapolated). 0 without EP.
  double all_to_all_us(std::int64_t tokens, bool* extrapolated = nullptr) const;
  /// The EP exchange is priced from DeepEP: sglang backend, DeepEP tables for this GPU, 1 < ep_ffn <= GPUs per node.
  bool uses_deepep() const { return use_deepep_; }
  /// One DeepEP dispatch + combine with `tokens_per_rank` tokens on each EP rank: normal mode for a step with
  /// prefill tokens, low-latency for a decode-only step (SGLang's default --deepep-mode auto). Flags lookups
  /// outside the measured shapes and EP groups other than the measured 8 ranks. 0 when !uses_deepep().
  double deepep_us(std::int64_t tokens_per_rank, bool prefill, bool* extrapolated = nullptr) const;
  /// The normal-mode (prefill) or low-latency (decode-only) predictor for this model's shape.
  const DeepEpTable& deepep(bool prefill) const { return prefill ? deepep_normal_ : deepep_ll_; }
  /// One MoE layer as dispatch + slowest rank's experts + combine for these expert loads.
  MoeLayerTime moe_layer(std::int64_t tokens, const std::vector<std::int64_t>& loads,
                         bool* extrapolated = nullptr) const;
  /// One pipeline hop: what the backend's stage hands the next (pipeline_hop.h: hidden states and residual, each
  /// [tokens x hidden] 16-bit; vLLM and SGLang send 1/tp of each from every TP rank and all-gather them over TP at
  /// the receiver, TRT-LLM sends them whole). The send reads the measured send/recv curve of the hop's placement
  /// (p2p.json: the stages share a node when the role's GPUs fit one, else they cross the network), else the link
  /// roofline (link bandwidth x efficiency + fixed latency); the all-gather reads the NCCL table, else its roofline.
  /// Outside the measured sizes, as for collectives: the smallest message's time below, scaled linearly in size
  /// above; both flagged. 0 without pipeline parallelism.
  double pipeline_hop_us(double tokens, bool* extrapolated = nullptr) const;
  /// One send of `bytes` between stages (the measured curve of the hop's placement, else the link roofline).
  double pipeline_send_us(double bytes, bool* extrapolated = nullptr) const;
  const BackendConstants& constants() const { return k_; }
  void set_constants(const BackendConstants& k) { k_ = k; }
  MoeRouting routing() const { return routing_; }

 private:
  LogCurve p2p_hop_;  ///< send/recv time (us) against bytes for this role's hop placement; empty = link roofline
  bool hop_intra_node_ = true;  ///< the role's GPUs fit one node: its pipeline hops stay on NVLink
  PipelineHopShape hop_;        ///< what the backend sends per hop
  /// vLLM runs a step's prompt tokens and decodes in one varlen attention call (its V1 FlashAttention backend);
  /// SGLang and TensorRT-LLM run them apart. Set from the backend at construction.
  bool unified_attention_call_ = false;
  struct GemmUse {
    GemmCurve table;  ///< empty = datasheet
    bool grid = false;  ///< a grid of this format exists (an empty `table` then means no measured cell near it)
    double count = 1; ///< per layer
    WeightFormat weights = WeightFormat::kBf16;  ///< how the weights are stored (the datasheet path's bytes)
    /// The table's time includes an input quantisation kernel that the engine fuses into the elementwise kernel
    /// before the GEMM (fused_input_quant): its time is taken off (input_quant_us).
    bool quant_fused = false;
  };
  /// Marks `g` (a module of weight format `f`) quant_fused where the engine fuses its input quantisation into the
  /// RMSNorm or SiLU-and-mul before it.
  void fuse_input_quant(GemmUse& g, WeightFormat f) const;
  /// One static per-tensor FP8 quantisation of an m x k activation (read 16-bit, write 8-bit), us.
  double input_quant_us(double m, double k) const;
  GemmUse make_gemm(double n, double k, double count, WeightFormat f) const;
  /// The format whose kernels run `f` on this GPU (FP8 on a GPU without FP8 tensor cores: bf16 math).
  WeightFormat math_format(WeightFormat f) const;
  double gemm_use_us(const GemmUse& g, double m, bool* extrap) const;
  double datasheet_gemm_us(double m, double n, double k, WeightFormat weights) const;
  void build_gemms();
  /// An attention grid chosen for this role's heads: its predictor, the head ratio its prices scale by, and
  /// whether it is another head configuration's (flagged as approximate when it prices).
  struct GridAttention {
    AttentionPredictor p;
    double scale = 1;    ///< heads on this GPU / heads of the grid used
    bool approx = false;
    bool ok() const { return p.ok(); }
    /// The predictor's price of `chunks` (prefill) or `contexts` (decode) times the head ratio, the flags passed
    /// on; false where there is no grid or it cannot price the batch.
    bool prefill(const std::vector<PrefillChunk>& chunks, bool* extrapolated, double& us) const;
    bool decode(const std::vector<std::int32_t>& contexts, bool* extrapolated, double& us,
                bool beside_prefill = false) const;
  };
  void build_attention(const OpTable& t, bool decode, GridAttention& out, int window = 0);
  /// One prompt call on `grid`, else on the datasheet (roofline x efficiency curve).
  double prefill_on(const GridAttention& grid, const std::vector<PrefillChunk>& chunks, bool* extrapolated) const;
  /// MLA models: attention core from the module tables minus the capped GEMM-table projections, or from the
  /// kernel tables as they are (mla_module_table.h).
  void build_mla_attention();
  void build_moe();
  /// attention_projections_us over `layers` layers.
  double projections_all_layers_us(double layers, double tokens, bool* extrapolated) const;
  double elementwise_us(double tokens) const;
  double elementwise_attn_us(double tokens) const;
  double elementwise_ffn_us(double tokens) const;
  double all_reduce_on(double elements, int gpus, bool graph, bool* extrapolated) const;
  BatchCost price_parts(const BatchShape& s);
  BatchCost finish(double* us, const BatchShape& s, bool piecewise) const;
  void count(OpFamily f, bool extrapolated) const;
  /// The step's prompts are priced by a lookup of their own (not inside its decodes' call), for the lookup counts.
  bool prefill_lookup(const BatchShape& s) const {
    return !s.prefills.empty() && (s.num_decode == 0 || !one_token_prompts_decode(s.prefills));
  }

  ModelSpec m_;
  WeightFormats formats_;
  std::string moe_dtype_;
  std::string moe_distribution_;  ///< the MoE grid's routing: balanced, power_law_1.01 or power_law_1.2
  GpuSpec g_;
  Parallelism p_;
  EngineOptions e_;
  ProfileTables t_;
  EfficiencyCurves curves_;
  RooflineCostModel roofline_;
  BackendConstants k_;
  PriceSource source_[static_cast<int>(OpFamily::kCount)];
  std::vector<GemmUse> layer_gemms_;  // per attention layer (qkv, o)
  std::vector<GemmUse> dense_gemms_;  // per dense-FFN layer
  std::vector<GemmUse> moe_gemms_;    // per MoE layer: router, shared expert
  GemmUse lm_head_;
  GridAttention prefill_, decode_;
  GridAttention prefill_win_, decode_win_;  // sliding-window layers (window grids)
  double full_layers_ = 1, sliding_layers_ = 0;  // attention layers of the stage-summed model, by kind
  MlaModuleGrid mla_prefill_, mla_decode_;  // MLA: joined grids, module grids turned into attention-core grids
  GridAttention prefill_short_;              // MLA on vLLM: the decode-path kernel's prompt lengths (mla_path_)
  MlaDecodePath mla_path_;                   // set when prefill_short_ prices prompts up to its max_query
  MlaProjectionCap mla_cap_;                // MLA module tables: bound on the projections (empty otherwise)
  MoePredictor moe_;
  MoeRankCost moe_rank_;
  DeepEpTable deepep_ll_, deepep_normal_;  // SGLang roles with measured DeepEP tables
  bool use_deepep_ = false;                // sglang backend, EP > 1 inside a node, both tables usable
  MoeRouting routing_ = MoeRouting::kUniform;
  CostPart part_ = CostPart::kWhole;
  double alpha_ = 1.2;
  bool async_host_ = false;  // async_hides_host_time: only host time beyond the step's GPU time is exposed
  Rng rng_;
  /// Largest CUDA-graph capture size of a vLLM role: batches up to it run piecewise graphs when not fully captured
  /// (0 for other backends: piecewise_capture_max).
  std::int64_t max_capture_;
  std::vector<std::int64_t> loads_;
  std::vector<BatchShape> groups_;  // scratch: data-parallel attention groups of the batch
  double heads_local_ = 1, kv_heads_local_ = 1;
  double kv_bytes_per_key_ = 0;  // one layer's K and V of one key on this GPU (cold_l2_us)

  int qk_norm_kernels_ = 0;  // kernels a layer's QK RMSNorm adds (elementwise_attn_us)
  int layers_per_stage_ = 1;
  double layers_total_ = 1, moe_layers_total_ = 0, dense_layers_total_ = 0;
  CollectiveModel collectives_;
  /// Costs that depend on the token count only (GEMMs, elementwise, embedding, all-reduce in and out of
  /// graphs), memoised per count: pure functions of T, so the cache never changes a result.
  struct PerTokens {
    double gemm = -1, norm = 0, embedding = 0, ar_graph = 0, ar_eager = 0;
    bool ex_gemm = false, ex_ar_graph = false, ex_ar_eager = false;
  };
  std::vector<PerTokens> per_tokens_;
  PerTokens scratch_;
  const PerTokens& per_tokens(std::int64_t tokens);
  PerTokens compute_per_tokens(std::int64_t tokens) const;
  std::vector<double> lm_head_cache_;
  std::vector<unsigned char> lm_head_ex_;
  mutable std::int64_t lookups_[static_cast<int>(OpFamily::kCount)] = {};
  mutable std::int64_t extrapolated_[static_cast<int>(OpFamily::kCount)] = {};
};

/// The cost model for a role: measured tables when the GPU has them, else datasheet-derived; `catalog` may be
/// null (roofline). `seed` seeds the MoE routing stream; `part` limits it to one domain (A/F roles).
std::unique_ptr<CostModel> make_cost_model(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                                           const EngineOptions& engine, const ResourceCatalog* catalog,
                                           std::uint64_t seed, std::string& error, CostPart part = CostPart::kWhole);

}  // namespace servesim
