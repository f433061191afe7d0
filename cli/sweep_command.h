#pragma once
/// `servesim sweep` and `servesim sweep-merge`: run a sweep's points on a thread pool (optionally one shard
/// of N), write shard files, and merge them into the frontier document and CSV.
#include <string>
#include <vector>

/// argv after the command name. Returns the process exit code.
int sweep_command(const std::vector<std::string>& args, const std::string& profiles);
int sweep_merge_command(const std::vector<std::string>& args);
