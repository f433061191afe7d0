#pragma once
/// servesim_opcheck --transfer PROFILES_DIR FROM TO BACKEND (opcheck_transfer.cc).
int transfer_check_main(int argc, char** argv);
