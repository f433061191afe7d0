# Installs what the native build needs when it is missing (Debian packages). Idempotent; sourced by
# scripts/test, scripts/run and scripts/bench.
servesim_apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

servesim_native_deps() {
  servesim_apt_install cmake ninja-build g++ catch2 nlohmann-json3-dev python3
}

# Configures (once) and builds the native release tree: build/native.
servesim_build_native() {
  cmake --preset native-release -DSERVESIM_BUILD_TESTS=ON >/dev/null
  cmake --build --preset native-release -j "$(nproc)"
}
