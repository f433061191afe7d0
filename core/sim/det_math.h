#pragma once
/// Deterministic elementary functions. glibc, libc++/musl (wasm) and other libms may differ in the last bit
/// of log/exp/pow; results must be byte-identical everywhere, so samplers and cost models use these, which
/// are built only from IEEE-754 +, -, *, / and frexp/ldexp (all exact or correctly rounded).

namespace servesim {

/// Natural logarithm; x must be > 0 (returns -inf for 0, NaN for negatives).
double det_log(double x);
/// e^x; overflows to +inf, underflows to 0.
double det_exp(double x);
/// a^b for a > 0.
double det_pow(double a, double b);
/// log2 via det_log.
double det_log2(double x);

}  // namespace servesim
