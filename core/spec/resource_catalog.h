#pragma once
/// Named bundled resources (models, GPUs, traces, length CDFs) on top of a ResourceLoader.
/// `profiles/index.json` lists the names per folder so errors can say what is available.
#include <optional>
#include <string>
#include <vector>

#include "core/spec/json_reader.h"
#include "core/spec/resource_loader.h"

namespace servesim {

/// Looks up bundled data by folder and name.
class ResourceCatalog {
 public:
  explicit ResourceCatalog(ResourceLoader loader);
  /// Parses "<folder>/<name>.json" into `out`; false when the name is unsafe, missing or not JSON.
  bool load_json(const std::string& folder, const std::string& name, Json& out) const;
  /// Raw text of "<folder>/<file>"; nullopt when unsafe or missing.
  std::optional<std::string> load_text(const std::string& folder, const std::string& file) const;
  /// Names listed for `folder` in index.json (empty when there is no index).
  std::vector<std::string> list(const std::string& folder) const;
  /// list() joined with ", " for error messages.
  std::string list_joined(const std::string& folder) const;
  /// GPUs whose measured table `table` ("vllm/gemm", "sglang/deepep_ll") the index lists, in index order.
  std::vector<std::string> gpus_with_table(const std::string& table) const;
  /// GPUs listing any of `tables`: those of the first table in index order, then the others' not yet named.
  std::vector<std::string> gpus_with_any_table(const std::vector<std::string>& tables) const;
  /// True when the index lists any measured table of `gpu`.
  bool gpu_has_tables(const std::string& gpu) const;

 private:
  ResourceLoader loader_;
  Json index_;
};

}  // namespace servesim
