#pragma once
/// Serving-engine options in vLLM's spelling (SGLang equivalents noted per field).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/spec/json_reader.h"

namespace servesim {

/// Engine configuration of one role's replicas.
struct EngineOptions {
  std::string backend = "vllm";              ///< engine whose kernels and overheads are priced: vllm, sglang, trtllm
  std::string scheduler = "vllm_v1";         ///< batch-formation policy (registry: scheduler_registry)
  int max_num_seqs = 256;                    ///< running-request cap (SGLang --max-running-requests)
  std::int64_t max_num_batched_tokens = 8192;  ///< token budget per iteration (SGLang --chunked-prefill-size)
  /// Split long prompts across iterations. Unset = the backend's default: on for vllm and sglang, off for trtllm
  /// (TRT-LLM's enable_chunked_prefill defaults to false; it then refuses a prompt longer than max_num_tokens).
  bool enable_chunked_prefill = true;
  bool enable_chunked_prefill_set = false;        ///< enable_chunked_prefill was given (else it follows the backend)
  std::int64_t long_prefill_token_threshold = 0;  ///< cap on one request's prefill chunk (0 = budget only)
  /// SGLang --max-prefill-tokens: the new prompt tokens one prefill batch may take. SGLang's PrefillAdder always
  /// admits a batch's first prompt; a further one only while its prompt is below what is left, and none once
  /// nothing is left. Read by the `sglang` scheduler only (refused under the others); SGLang's default 16384.
  std::int64_t max_prefill_tokens = 16384;
  /// KV-cache block in tokens (SGLang --page-size, TRT-LLM kv_cache_config.tokens_per_block). Unset = 16, or 32
  /// for backend trtllm (TRT-LLM's default tokens_per_block).
  int block_size = 16;
  bool block_size_set = false;  ///< block_size was given (else it follows the backend's default)
  /// The engine's memory fraction (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, TRT-LLM
  /// kv_cache_config.free_gpu_memory_fraction; each engine applies it to different memory: memory_model.h). Unset =
  /// the engine's default: 0.9 for vllm and trtllm, SGLang's own formula for sglang
  /// (sglang_default_mem_fraction_static).
  std::optional<double> gpu_memory_utilization;
  std::int64_t max_model_len = 0;            ///< prompt+output cap; 0 = the model's max_position_embeddings
  double kv_watermark = 0.01;                ///< share of KV blocks kept free when admitting a new request
  std::string dtype = "bfloat16";            ///< weight/activation dtype ("fp8" = FP8 weights and GEMMs)
  std::string kv_cache_dtype = "auto";       ///< "auto" = dtype; "fp8" halves KV bytes
  bool enforce_eager = false;                ///< disable CUDA graphs
  /// The engine schedules step n+1 while the GPU runs step n: vLLM --async-scheduling (--no-async-scheduling negates
  /// it), TRT-LLM's overlap scheduler (disable_overlap_scheduler negates it), SGLang's overlap schedule
  /// (--disable-overlap-schedule). A request arriving while a step runs then joins the step after the next: that one
  /// was formed when the running step launched. Unset = the engine's default (async_scheduling_on): on unless pp > 1.
  /// Host time: a vllm step then exposes only its host time beyond its GPU time (vLLM's host constants were fitted
  /// on synchronous runs); the trtllm and sglang host constants were fitted on runs of their overlap schedulers, so
  /// they stand for what the overlap leaves exposed and are added as fitted either way (async_hides_host_time).
  std::optional<bool> async_scheduling;
  /// vLLM's hybrid KV-cache manager (--disable-hybrid-kv-cache-manager negates it): sliding-window layers keep
  /// only the window's blocks and a KV transfer moves only those. Unset = vLLM's resolution for the role
  /// (hybrid_kv_cache_on): on, except where a KV connector is configured (P, D and A roles of a disaggregated
  /// deployment), as vLLM turns it off whenever --kv-transfer-config is set and the connector does not declare
  /// support. Models without sliding layers are unaffected.
  std::optional<bool> hybrid_kv_cache_manager;
  /// CUDA-graph capture sizes (decode batch sizes); empty = the engine's defaults (cuda_graph_plan.h).
  std::vector<std::int64_t> cuda_graph_sizes;
  /// Largest default capture size: vLLM max_cudagraph_capture_size, SGLang --cuda-graph-max-bs, TRT-LLM
  /// cuda_graph_config.max_batch_size. 0 = the engine's default (vLLM 512, within 2 x max_num_seqs; SGLang by the GPU's
  /// memory and TP, sglang_cuda_graph_max_bs; TRT-LLM 128).
  std::int64_t max_cudagraph_capture_size = 0;
  /// Whether a decode batch between capture sizes is padded up to the next one and replayed (else it runs eagerly):
  /// TRT-LLM cuda_graph_config.enable_padding, SGLang's padding (--disable-cuda-graph-padding negates it). Unset = the
  /// engine's default: on, off for trtllm. vLLM always pads (the option is refused under backend vllm).
  std::optional<bool> cuda_graph_padding;
  std::string moe_routing = "uniform";       ///< token->expert assignment: uniform, balanced, power_law
  double moe_power_law_alpha = 1.2;          ///< exponent of the power_law routing
  /// EP all-to-all of DP-attention roles (SGLang --moe-a2a-backend): "none" (SGLang's default: the NCCL
  /// all-to-all tables) or "deepep" (DeepEP normal/low-latency kernels; measured for the sglang backend only).
  std::string moe_a2a_backend = "none";
  /// Host-side time of the engine (us). Negative = the backend's calibrated constant (docs/validation.md).
  struct Host {
    double iteration_us = -1;           ///< per engine step: schedule, prepare inputs, sample, process outputs
    double per_request_us = -1;         ///< per scheduled request per step
    double per_token_us = -1;           ///< per scheduled token per step
    double launch_us = -1;              ///< one kernel launch outside a CUDA graph
    /// pp > 1: false (default) = the host time occupies stage 0 before its kernels, so the next batch waits for
    /// both; true = the host is its own serial resource and prepares the next batch while stage 0 runs the last.
    /// An assumption either way: the calibrated constants come from pp = 1 runs, which cannot tell them apart.
    bool overlaps_pipeline = false;
  } host;
  /// The serving front-end between the clients and the engine (the API server's request handling before the engine
  /// sees a request; detokenising and streaming each output token after the engine produced it), each direction one
  /// serial resource per replica. A request waits its turn for `request_us`, a token for `token_us`; the client sees
  /// the token when its turn ends. 0 (the default) = the front-end is never the bottleneck.
  struct Frontend {
    double request_us = 0;  ///< per request, before the engine sees it
    double token_us = 0;    ///< per output token, before the client sees it
  } frontend;
};

/// Reads fields present in `j` over `opts` (so a role's "engine" overrides the scenario's).
void read_engine_options(const Json& j, const std::string& path, EngineOptions& opts, Errors& errors);

/// Whether a role schedules a step ahead of the GPU (async_scheduling): the explicit option, else the engine's
/// default: on unless pipeline parallel (vLLM's VllmConfig resolves an unset async_scheduling so since vLLM made it
/// the default; TRT-LLM's disable_overlap_scheduler and SGLang's --disable-overlap-schedule default to false, and
/// both engines run pipeline parallelism in a loop of their own that does not overlap).
bool async_scheduling_on(const EngineOptions& o, int pp);
/// Whether the step's host time hides under its GPU time: vLLM's async scheduling only (see async_scheduling).
bool async_hides_host_time(const EngineOptions& o, int pp);

/// Whether a role's sliding-window layers keep only the window (vLLM's hybrid KV-cache manager): the explicit
/// option, else on unless the role exchanges KV with another role (`kv_connector`: P, D, A roles) under backend vllm;
/// always off under backend sglang for the model classes of sglang_disables_hybrid_swa (`architecture`).
bool hybrid_kv_cache_on(const EngineOptions& o, bool kv_connector, const std::string& architecture = "");
/// SGLang turns its hybrid SWA memory off for these model classes whatever the flags
/// (ServerArgs._handle_model_specific_adjustments sets disable_hybrid_swa_memory for GptOssForCausalLM, the Gemma 2/3
/// families and Olmo2ForCausalLM): every layer keeps every token.
bool sglang_disables_hybrid_swa(const std::string& architecture);

/// SGLang's default --mem-fraction-static (ServerArgs._handle_gpu_memory_settings, the rule since SGLang PR #10975):
/// (gpu_mem - reserved) / gpu_mem rounded to 3 decimals, reserved in MiB = 512 (attention-backend metadata)
/// + 1.5 x max(chunked_prefill_size, 2048) (prefill activations) + 2 x cuda_graph_max_bs (graph buffers)
/// + tp x pp / 8 x 1024, with data-parallel attention + 3 x cuda_graph_max_bs x dp (+ 1.5 x that again when
/// cuda_graph_max_bs > 300), at least 10 GiB on GPUs above 60 GiB. chunked_prefill_size is max_num_batched_tokens;
/// cuda_graph_max_bs is sglang_cuda_graph_max_bs.
/// `gpu_mem_bytes`: the device's memory (SGLang reads nvidia-smi's memory.total, about 0.6% more than the
/// torch total_memory the GPU profiles record on an H100).
double sglang_default_mem_fraction_static(const EngineOptions& o, double gpu_mem_bytes, int tp, int pp, int dp_attn);

/// A role's SGLang --cuda-graph-max-bs: the largest of cuda_graph_sizes, else max_cudagraph_capture_size, else
/// SGLang's default (ServerArgs) for a GPU of `gpu_mem_bytes` and `tp` GPUs per replica: 8 below 20 GiB; 24 or 80
/// below 35 GiB, 32 or 160 below 60 GiB, 256 or 512 below 160 GiB for tp < 4 or more; 512 above, and 512 when the
/// memory is unknown (0 bytes).
int sglang_cuda_graph_max_bs(const EngineOptions& o, double gpu_mem_bytes, int tp);

/// Bytes per element of a dtype name ("bfloat16" 2, "fp8" 1, "float32" 4).
double dtype_bytes(const std::string& dtype);

}  // namespace servesim
