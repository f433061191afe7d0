#include "core/spec/resource_catalog.h"

#include <algorithm>

namespace servesim {

ResourceCatalog::ResourceCatalog(ResourceLoader loader) : loader_(std::move(loader)) {
  if (!loader_) return;
  if (auto text = loader_("index.json")) index_ = Json::parse(*text, nullptr, false);
  if (index_.is_discarded()) index_ = Json();
}

bool ResourceCatalog::load_json(const std::string& folder, const std::string& name, Json& out) const {
  auto text = load_text(folder, name + ".json");
  if (!text) return false;
  out = Json::parse(*text, nullptr, false);
  return !out.is_discarded();
}

std::optional<std::string> ResourceCatalog::load_text(const std::string& folder, const std::string& file) const {
  if (!loader_ || !is_safe_resource_name(file)) return std::nullopt;
  return loader_(folder + "/" + file);
}

std::vector<std::string> ResourceCatalog::list(const std::string& folder) const {
  std::vector<std::string> out;
  if (index_.is_object() && index_.contains(folder) && index_[folder].is_array())
    for (const auto& v : index_[folder])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string ResourceCatalog::list_joined(const std::string& folder) const {
  std::string s;
  for (const auto& n : list(folder)) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none bundled)" : s;
}

std::vector<std::string> ResourceCatalog::gpus_with_table(const std::string& table) const {
  std::vector<std::string> out;
  const std::string suffix = "/" + table;
  for (const std::string& entry : list("tables")) {
    if (entry.size() <= suffix.size() || entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string gpu = entry.substr(0, entry.size() - suffix.size());
    if (gpu.find('/') == std::string::npos) out.push_back(gpu);
  }
  return out;
}

std::vector<std::string> ResourceCatalog::gpus_with_any_table(const std::vector<std::string>& tables) const {
  std::vector<std::string> out;
  for (const std::string& table : tables)
    for (const std::string& gpu : gpus_with_table(table))
      if (std::find(out.begin(), out.end(), gpu) == out.end()) out.push_back(gpu);
  return out;
}

bool ResourceCatalog::gpu_has_tables(const std::string& gpu) const {
  const std::string prefix = gpu + "/";
  for (const std::string& entry : list("tables"))
    if (entry.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

}  // namespace servesim
