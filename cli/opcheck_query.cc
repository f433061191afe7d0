// servesim_opcheck --query: the simulator's GEMM and collective predictors over the full measured tables, for
// shapes read from standard input, so that measurements from another campaign can be compared with them
// (scripts/cross_source.py). One query per line, one answer per line:
//
//   gemm DTYPE M N K            ->  <us> <extrapolated 0|1>      (PROFILES_DIR/GPU/BACKEND/gemm.json)
//   collective OP half GPUS E   ->  <us> <extrapolated 0|1>      (PROFILES_DIR/GPU/nccl.json, E elements per GPU,
//                                                                 read by CollectiveModel as roles read it)
//
// A query the tables cannot answer (no grid for the key, malformed line) prints "nan 1" and a message on stderr
// naming the line; the run goes on.
//
//   servesim_opcheck --query PROFILES_DIR GPU BACKEND
#include "cli/opcheck_query.h"

#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "cli/op_table_file.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/op_table.h"

using namespace servesim;

namespace {

bool positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

int query_main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: servesim_opcheck --query PROFILES_DIR GPU BACKEND  (queries on standard input)\n";
    return 2;
  }
  const std::string root = argv[2], gpu = argv[3], backend = argv[4];
  OpTable gemm, nccl;
  const bool have_gemm = load_op_table_file(root + "/" + gpu + "/" + backend + "/gemm.json", gemm);
  const bool have_nccl = load_op_table_file(root + "/" + gpu + "/nccl.json", nccl);
  CollectiveModel collectives;  // the simulator's NCCL predictor (16-bit collectives), as roles run it
  collectives.set_tables(have_nccl ? &nccl : nullptr, nullptr, 0);
  std::map<std::string, GemmCurve> curves;  // by "dtype n k"
  std::string line;
  long line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    std::istringstream in(line);
    std::string kind;
    if (!(in >> kind)) continue;
    double us = NAN;
    bool extrapolated = true;
    std::string why;
    if (kind == "gemm") {
      std::string dtype;
      double m = 0, n = 0, k = 0;
      if (!(in >> dtype >> m >> n >> k) || !positive(m) || !positive(n) || !positive(k)) {
        why = "expected: gemm DTYPE M N K with M, N, K > 0";
      } else if (!have_gemm) {
        why = "no gemm.json for " + gpu + "/" + backend;
      } else if (const OpGrid* g = gemm.find({dtype})) {
        const std::string key = dtype + " " + std::to_string(n) + " " + std::to_string(k);
        auto it = curves.find(key);
        if (it == curves.end()) it = curves.emplace(key, make_gemm_curve(*g, n, k)).first;
        if (it->second.ok()) {
          extrapolated = false;
          us = it->second.us(m, &extrapolated);
        } else {
          why = "no measurements near n " + std::to_string(n) + ", k " + std::to_string(k);
        }
      } else {
        why = "no gemm grid for dtype " + dtype;
      }
    } else if (kind == "collective") {
      std::string op, dtype;
      int gpus = 0;
      double elements = 0;
      if (!(in >> op >> dtype >> gpus >> elements) || gpus < 2 || !positive(elements)) {
        why = "expected: collective OP DTYPE GPUS ELEMENTS with GPUS >= 2 and ELEMENTS > 0";
      } else if (!have_nccl) {
        why = "no nccl.json for " + gpu;
      } else if (dtype != "half") {
        why = "the simulator prices 16-bit collectives only (dtype half), not " + dtype;
      } else if (const CollectiveTime t = collectives.nccl(op, elements, gpus); t.ok) {
        us = t.us;
        extrapolated = t.extrapolated;
      } else {
        why = "no collective grid for " + op + " half " + std::to_string(gpus);
      }
    } else {
      why = "unknown query kind '" + kind + "' (gemm or collective)";
    }
    if (!why.empty()) std::cerr << "query line " << line_no << ": " << why << "\n";
    std::cout << (std::isnan(us) ? std::string("nan") : std::to_string(us)) << " " << (extrapolated ? 1 : 0) << "\n";
  }
  return 0;
}
