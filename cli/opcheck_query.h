#pragma once
/// servesim_opcheck --query PROFILES_DIR GPU BACKEND (opcheck_query.cc).
int query_main(int argc, char** argv);
