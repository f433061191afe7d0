// servesim command line: run a scenario, validate scenarios. Everything goes through core/api's Session.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/file_io.h"
#include "cli/sweep_command.h"
#include "core/api/session.h"
#include "core/metrics/cost_comparison.h"

namespace fs = std::filesystem;
using servesim::Errors;
using servesim::Session;

namespace {

const char* kUsage =
    "usage:\n"
    "  servesim run SCENARIO.json [--out FILE] [--trace FILE] [--seed N] [--baseline FILE] [--profiles DIR]\n"
    "               [--quiet]\n"
    "      simulate; print the Serving Benchmark Result block; write the result JSON\n"
    "      (default out/<scenario>.result.json) and, with --trace, a Chrome/Perfetto trace;\n"
    "      --baseline also runs FILE and adds Frontier's spend ratio SR and cost efficiency CE against it\n"
    "  servesim validate FILE [FILE...] [--profiles DIR]\n"
    "      print every error of each scenario (path: message); exit 1 if any\n"
    "  servesim sweep SWEEP.json --out DIR [--jobs N] [--shard i/N]\n"
    "      run a design-space sweep (docs/sweep.md); without --shard also merges into DIR/sweep.json and\n"
    "      DIR/frontier.csv\n"
    "  servesim sweep-merge DIR\n"
    "      merge DIR/shard-*-of-*.json written by sharded runs\n"
    "  servesim version\n"
    "Bundled models, GPUs and traces are read from --profiles, $SERVESIM_PROFILES, or the source tree's profiles/.\n";

std::string profiles_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("SERVESIM_PROFILES")) return env;
  return SERVESIM_SOURCE_PROFILES;
}

void print_errors(const std::string& file, const Errors& errors) {
  for (const auto& e : errors.list()) std::fprintf(stderr, "%s: %s\n", file.c_str(), e.to_string().c_str());
}

struct Args {
  std::vector<std::string> positional;
  std::string out, trace, profiles, baseline;
  bool has_seed = false, quiet = false;
  unsigned long long seed = 0;
};

bool parse_args(int argc, char** argv, Args& a) {
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    if (s == "--out") {
      if (!value(a.out)) return false;
    } else if (s == "--trace") {
      if (!value(a.trace)) return false;
    } else if (s == "--baseline") {
      if (!value(a.baseline)) return false;
    } else if (s == "--profiles") {
      if (!value(a.profiles)) return false;
    } else if (s == "--seed") {
      std::string v;
      if (!value(v)) return false;
      char* end = nullptr;
      a.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-') {
        std::fprintf(stderr, "--seed: must be a non-negative integer, got \"%s\"\n", v.c_str());
        return false;
      }
      a.has_seed = true;
    } else if (s == "--quiet") {
      a.quiet = true;
    } else if (s.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", s.c_str());
      return false;
    } else {
      a.positional.push_back(s);
    }
  }
  return true;
}

int cmd_validate(const Args& a) {
  if (a.positional.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const auto loader = servesim::directory_loader(profiles_dir(a.profiles));
  int bad = 0;
  for (const auto& file : a.positional) {
    std::string text;
    if (!read_file(file, text)) {
      std::fprintf(stderr, "%s: cannot read the file\n", file.c_str());
      ++bad;
      continue;
    }
    Errors errors;
    auto session = Session::create(text, loader, errors);
    if (errors.ok()) {
      std::printf("%s: ok\n", file.c_str());
    } else {
      print_errors(file, errors);
      ++bad;
    }
  }
  return bad ? 1 : 0;
}

int cmd_run(const Args& a) {
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string& file = a.positional[0];
  std::string text;
  if (!read_file(file, text)) {
    std::fprintf(stderr, "%s: cannot read the file\n", file.c_str());
    return 2;
  }
  servesim::SessionOptions opts;
  if (a.has_seed) opts.seed = a.seed;
  opts.keep_trace = !a.trace.empty();
  Errors errors;
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(text, servesim::directory_loader(profiles_dir(a.profiles)), errors, opts);
  if (!session) {
    print_errors(file, errors);
    return 1;
  }
  const bool tty = isatty(STDERR_FILENO) && !a.quiet;
  auto last_print = t0;
  servesim::Progress p;
  do {
    p = session->step(200000);
    const auto now = std::chrono::steady_clock::now();
    if (tty && now - last_print > std::chrono::milliseconds(250)) {
      last_print = now;
      std::fprintf(stderr, "\r%lld/%lld requests, simulated %.1f s, %llu events", (long long)p.requests_done,
                   (long long)p.requests_total, p.sim_time_s, (unsigned long long)p.events);
    }
  } while (!p.finished);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  std::fputs(session->benchmark_block().c_str(), stdout);
  std::string out = a.out;
  if (out.empty()) out = "out/" + fs::path(file).stem().string() + ".result.json";
  std::string result = session->result_json();
  if (!a.baseline.empty()) {
    std::string base_text, error;
    if (!read_file(a.baseline, base_text)) {
      std::fprintf(stderr, "%s: cannot read the file\n", a.baseline.c_str());
      return 2;
    }
    Errors base_errors;
    servesim::SessionOptions base_opts;
    if (a.has_seed) base_opts.seed = a.seed;
    auto base = Session::create(base_text, servesim::directory_loader(profiles_dir(a.profiles)), base_errors, base_opts);
    if (!base) {
      print_errors(a.baseline, base_errors);
      return 1;
    }
    while (!base->step(1000000).finished) {
    }
    result = servesim::add_baseline_comparison(result, base->result_json(), error);
    if (result.empty()) {
      std::fprintf(stderr, "--baseline: %s\n", error.c_str());
      return 1;
    }
    const auto b = nlohmann::json::parse(result)["baseline"];
    std::printf("versus %s: spend ratio SR %.3f, cost efficiency CE %.3f\n", a.baseline.c_str(),
                b["spend_ratio"].get<double>(), b["cost_efficiency"].get<double>());
  }
  if (!write_file(out, result + "\n")) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 2;
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  if (!a.quiet)
    std::fprintf(stderr, "result: %s (%.3f s wall, %llu events, peak RSS %.1f MiB)\n", out.c_str(), wall,
                 (unsigned long long)p.events, usage.ru_maxrss / 1024.0);
  if (!a.trace.empty()) {
    if (!write_file(a.trace, session->chrome_trace_json())) {
      std::fprintf(stderr, "cannot write %s\n", a.trace.c_str());
      return 2;
    }
    if (!a.quiet) std::fprintf(stderr, "trace: %s (open in ui.perfetto.dev)\n", a.trace.c_str());
  }
  if (p.status != "completed") {
    std::fprintf(stderr, "run %s\n", p.status.c_str());
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "version" || cmd == "--version") {
    std::printf("servesim %s\n", servesim::servesim_version());
    return 0;
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "sweep" || cmd == "sweep-merge") {
    std::vector<std::string> rest;
    std::string profiles;
    for (int i = 2; i < argc; ++i) {
      if (std::string(argv[i]) == "--profiles" && i + 1 < argc) profiles = argv[++i];
      else rest.push_back(argv[i]);
    }
    return cmd == "sweep" ? sweep_command(rest, profiles_dir(profiles)) : sweep_merge_command(rest);
  }
  Args a;
  if (!parse_args(argc, argv, a)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (cmd == "run") return cmd_run(a);
  if (cmd == "validate") return cmd_validate(a);
  std::fprintf(stderr, "unknown command \"%s\"\n%s", cmd.c_str(), kUsage);
  return 2;
}
