#include "cli/sweep_command.h"

#include "cli/file_io.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/explore/sweep_runner.h"

namespace fs = std::filesystem;
using servesim::Json;

namespace {

int write_merged(const fs::path& dir, const std::string& merged) {
  if (!write_file((dir / "sweep.json").string(), merged + "\n") ||
      !write_file((dir / "frontier.csv").string(), servesim::sweep_csv(merged))) {
    std::fprintf(stderr, "cannot write into %s\n", dir.string().c_str());
    return 2;
  }
  const Json m = Json::parse(merged);
  std::printf("%s: %lld points, %lld ran\n", m["sweep"].get<std::string>().c_str(),
              static_cast<long long>(m["total_points"].get<std::int64_t>()), static_cast<long long>(m["ran"].get<std::int64_t>()));
  for (auto it = m["filtered_by_reason"].begin(); it != m["filtered_by_reason"].end(); ++it)
    std::printf("  filtered (%s): %lld\n", it.key().c_str(), static_cast<long long>(it.value().get<std::int64_t>()));
  for (auto it = m["frontiers"].begin(); it != m["frontiers"].end(); ++it)
    std::printf("  frontier %s: %zu points\n", it.key().c_str(), it.value().size());
  std::printf("  best under the SLA: %s\n", m["best"].get<std::string>().empty() ? "(none)" : m["best"].get<std::string>().c_str());
  std::printf("wrote %s and %s\n", (dir / "sweep.json").string().c_str(), (dir / "frontier.csv").string().c_str());
  return 0;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args, const std::string& profiles) {
  std::string file, out;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int shard = 0, shards = 1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--out" && has_value) out = args[++i];
    else if (a == "--jobs" && has_value) jobs = std::atoi(args[++i].c_str());
    else if (a == "--shard" && has_value) {
      if (std::sscanf(args[++i].c_str(), "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 || shard >= shards) {
        std::fprintf(stderr, "--shard: expected i/N with 0 <= i < N, got %s\n", args[i].c_str());
        return 2;
      }
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "sweep: unknown option %s\n", a.c_str());
      return 2;
    } else file = a;
  }
  if (file.empty() || out.empty() || jobs < 1 || jobs > 1024) {
    std::fprintf(stderr, "usage: servesim sweep SWEEP.json --out DIR [--jobs N] [--shard i/N]\n");
    return 2;
  }
  std::string text;
  if (!read_file(file, text)) {
    std::fprintf(stderr, "%s: cannot read the file\n", file.c_str());
    return 2;
  }
  servesim::SweepSpec spec;
  servesim::Errors errors;
  if (!servesim::parse_sweep(text, spec, errors)) {
    for (const auto& e : errors.list()) std::fprintf(stderr, "%s: %s\n", file.c_str(), e.to_string().c_str());
    return 1;
  }
  const auto points = servesim::expand_sweep(spec);
  std::vector<const servesim::SweepPoint*> mine;
  for (const auto& p : points)
    if (p.index % shards == shard) mine.push_back(&p);
  std::vector<Json> records(mine.size());
  const auto loader = servesim::directory_loader(profiles);
  std::atomic<std::size_t> next{0}, done{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::size_t i; (i = next++) < mine.size();) {
      records[i] = servesim::evaluate_point(spec, *mine[i], loader);
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (int j = 0; j < jobs; ++j) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "shard %d/%d: %zu points in %.2f s with %d jobs (%.1f points/s)\n", shard, shards, mine.size(),
               wall, jobs, wall > 0 ? mine.size() / wall : 0.0);
  const Json doc = servesim::make_shard(spec, text, shard, shards, static_cast<std::int64_t>(points.size()), std::move(records));
  const fs::path dir(out);
  const fs::path shard_file = dir / ("shard-" + std::to_string(shard) + "-of-" + std::to_string(shards) + ".json");
  if (!write_file(shard_file.string(), doc.dump() + "\n")) {
    std::fprintf(stderr, "cannot write %s\n", shard_file.string().c_str());
    return 2;
  }
  if (shards > 1) {
    std::printf("wrote %s; merge all shards with: servesim sweep-merge %s\n", shard_file.string().c_str(), out.c_str());
    return 0;
  }
  std::string error;
  const std::string merged = servesim::merge_shards({doc.dump()}, error);
  if (merged.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return write_merged(dir, merged);
}

int sweep_merge_command(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "usage: servesim sweep-merge DIR   (merges DIR/shard-*-of-*.json)\n");
    return 2;
  }
  const fs::path dir(args[0]);
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("shard-", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());  // directory order is not deterministic
  std::vector<std::string> docs;
  for (const auto& n : names) {
    std::string t;
    if (!read_file(n, t)) {
      std::fprintf(stderr, "%s: cannot read\n", n.c_str());
      return 2;
    }
    docs.push_back(std::move(t));
  }
  std::string error;
  const std::string merged = servesim::merge_shards(docs, error);
  if (merged.empty()) {
    std::fprintf(stderr, "sweep-merge: %s\n", error.c_str());
    return 1;
  }
  return write_merged(dir, merged);
}
