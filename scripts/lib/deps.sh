# Installs what the native build needs when it is missing (Debian packages). Idempotent; sourced by
# scripts/test, scripts/run and scripts/bench.
servesim_apt_install() {
  local missing=()
  for pkg in "$@"; do
    # `dpkg -s` also succeeds for a removed package whose config files remain; only "install ok installed" counts.
    [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || missing+=("$pkg")
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

# The npm packages pinned in package-lock.json (uPlot for the page, playwright-core for the browser tests):
# `npm ci` when node_modules is missing or older than the lockfile. Node itself comes from Debian if absent.
servesim_npm_deps() {
  command -v npm >/dev/null 2>&1 || servesim_apt_install nodejs npm
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund >&2
  fi
}

# Debian's Chromium for the browser tests (playwright-core drives /usr/bin/chromium; no browser download).
servesim_browser_deps() {
  servesim_apt_install chromium fonts-dejavu-core
  if [ ! -x /usr/bin/chromium ]; then
    # Registered as installed but the binary is gone (a machine image pruned after install): reinstall it.
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "reinstalling chromium: /usr/bin/chromium is missing" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends --reinstall chromium >&2
  fi
  [ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium is still missing after installing chromium" >&2; return 1; }
  servesim_npm_deps
}

# Debian's Emscripten 3.1.6 (the wasm-release preset uses its toolchain file) and Node, when missing.
servesim_wasm_deps() {
  servesim_native_deps
  command -v node >/dev/null 2>&1 || servesim_apt_install nodejs
  servesim_apt_install emscripten
}

# Configures and builds the wasm-release tree (build/wasm), then copies the module to web/assets/ when it
# changed (servesim.js, servesim.wasm) and stages profiles/ in web/assets/profiles/ with its manifest: the
# worker fetches the files a scenario needs from there (web/lib/profiles.js); nothing is preloaded.
servesim_build_wasm() {
  # Emscripten 3.1.6's optimised links load acorn from Debian's node modules.
  export NODE_PATH=/usr/share/nodejs
  cmake --preset wasm-release >/dev/null
  cmake --build --preset wasm-release -j "$(nproc)"
  mkdir -p web/assets
  local f
  for f in servesim.js servesim.wasm; do
    cmp -s "build/wasm/wasm/$f" "web/assets/$f" || cp "build/wasm/wasm/$f" "web/assets/$f"
  done
  rm -f web/assets/servesim.data
  node scripts/stage_profiles.mjs
}
