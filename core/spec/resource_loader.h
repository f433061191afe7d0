#pragma once
/// Access to bundled data (models, GPUs, traces, CDFs) by a path relative to profiles/.
/// Natively it reads files; in the browser the page supplies the bytes. The core never touches a
/// filesystem directly.
#include <functional>
#include <optional>
#include <string>

namespace servesim {

/// Returns the file's text, or nullopt when it does not exist. Paths look like "models/Llama-3.1-8B.json".
using ResourceLoader = std::function<std::optional<std::string>(const std::string& relative_path)>;

/// A loader reading from a directory on disk (the repository's profiles/).
ResourceLoader directory_loader(std::string root);

/// True when a bundled resource name is safe to turn into a path (letters, digits, '.', '-', '_'; no '..').
bool is_safe_resource_name(const std::string& name);

}  // namespace servesim
