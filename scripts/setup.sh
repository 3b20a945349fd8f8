#!/usr/bin/env bash
# Installs everything convgate's build and tests need on Debian 12, idempotently.
#  - Debian packages (skipped when all are already installed, so a second run takes seconds).
#  - ONNX Runtime 1.29.0 from a pinned npm tarball, both checksums verified, cached outside the work
#    tree in ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}. Nothing downloaded is ever written into the
#    checkout.
#  - The project's one Python virtual environment, ${CONVGATE_DEPS}/venv, from
#    scripts/python-requirements.txt (exact versions and sha256 hashes, pip --require-hashes);
#    rebuilt only when that file changes. convgate and its scripts find it through CONVGATE_VENV
#    (default: that folder).
# Prints the ONNX Runtime root as ORT_ROOT=... and the venv as CONVGATE_VENV=... for callers.
set -euo pipefail

DEPS_DIR="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}"

# Every Debian package the build, tests and benchmarks use. Keep sorted; say why in docs/architecture.md.
# slurm-wlm: slurmctld, slurmd and the clients for the single-host cluster the slurm tests start
# (scripts/services/slurm.sh); installed without recommends (no munge: the cluster uses auth/none).
# clang and libclang-rt-14-dev: the fuzz targets (-DCONVGATE_FUZZ=ON, fuzz/CMakeLists.txt) need
# clang's -fsanitize=fuzzer, whose libFuzzer runtime Debian ships in libclang-rt-14-dev.
PACKAGES=(
  bc build-essential ca-certificates ccache clang clang-format cmake curl googletest
  libclang-rt-14-dev
  libcurl4-openssl-dev libgmock-dev libgtest-dev libcli11-dev libhwy-dev libonnx-dev libonnx-testdata libopencv-dnn-dev
  libopencv-imgcodecs-dev libopencv-imgproc-dev libprotobuf-dev libsqlite3-dev libssl-dev
  libtorch-dev libyaml-cpp-dev libzip-dev locales ninja-build nlohmann-json3-dev pkg-config
  python3-numpy python3-onnx python3-sklearn python3-torch python3-torchvision python3-venv
  slurm-wlm time
  # The PostgreSQL results store (libpqxx 6.4) and the throwaway server its tests start
  # (scripts/services/postgres.sh).
  libpq-dev libpqxx-dev postgresql-15 postgresql-client-15
  # The HTML report's browser tests: headless Chromium renders it offline (tests/report/html).
  chromium python3-pil
)

# Pinned ONNX Runtime: npm package com.github.asus4.onnxruntime@0.4.9 ships Microsoft's official
# 1.29.0 Linux x64 build and the matching API-29 headers (docs/architecture.md, Dependencies).
ORT_VERSION=1.29.0
ORT_NPM_URL="https://registry.npmjs.org/com.github.asus4.onnxruntime/-/com.github.asus4.onnxruntime-0.4.9.tgz"
ORT_TGZ_SHA256=e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d
ORT_SO_SHA256=5715f06d8992ca8eeeddcce43df3a7d38f97d537052126f558e912cb312460ca
ORT_HEADERS_IN_TGZ="package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers"
ORT_SO_IN_TGZ="package/Plugins/Linux/x64/libonnxruntime.so"

log() { echo "[setup] $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=()
  for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages: all ${#PACKAGES[@]} present"
    return
  fi
  log "Debian packages to install: ${missing[*]}"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# ONNX Runtime's StringNormalizer kernel needs the en_US.UTF-8 locale (conformance cases use it).
ensure_locale() {
  if locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then return; fi
  log "generating en_US.UTF-8 locale"
  as_root sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen
  as_root locale-gen >/dev/null
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

install_onnxruntime() {
  local root="$DEPS_DIR/onnxruntime-$ORT_VERSION"
  if [ -f "$root/.verified" ] && [ "$(sha256_of "$root/lib/libonnxruntime.so")" = "$ORT_SO_SHA256" ]; then
    log "ONNX Runtime $ORT_VERSION: cached at $root"
    echo "$root"
    return
  fi
  mkdir -p "$DEPS_DIR"
  local tgz="$DEPS_DIR/onnxruntime-npm-0.4.9.tgz"
  if [ ! -f "$tgz" ] || [ "$(sha256_of "$tgz")" != "$ORT_TGZ_SHA256" ]; then
    log "downloading $ORT_NPM_URL"
    curl -fL --retry 5 --retry-delay 2 --connect-timeout 20 -o "$tgz.part" "$ORT_NPM_URL"
    mv "$tgz.part" "$tgz"
  fi
  local got
  got=$(sha256_of "$tgz")
  if [ "$got" != "$ORT_TGZ_SHA256" ]; then
    rm -f "$tgz"
    log "checksum mismatch for the ONNX Runtime tarball: got $got, want $ORT_TGZ_SHA256"
    exit 1
  fi
  local staging
  staging=$(mktemp -d "$DEPS_DIR/.ort-staging.XXXXXX")
  tar --no-same-owner -xzf "$tgz" -C "$staging" "$ORT_SO_IN_TGZ" "$ORT_HEADERS_IN_TGZ"
  got=$(sha256_of "$staging/$ORT_SO_IN_TGZ")
  if [ "$got" != "$ORT_SO_SHA256" ]; then
    rm -rf "$staging"
    log "checksum mismatch for libonnxruntime.so: got $got, want $ORT_SO_SHA256"
    exit 1
  fi
  mkdir -p "$staging/root/lib" "$staging/root/include"
  mv "$staging/$ORT_SO_IN_TGZ" "$staging/root/lib/libonnxruntime.so"
  # The experimental headers in this package do not compile; leave them out.
  find "$staging/$ORT_HEADERS_IN_TGZ" -maxdepth 1 -name '*.h' ! -name 'onnxruntime_experimental_*' \
    -exec cp {} "$staging/root/include/" \;
  # The library's SONAME is libonnxruntime.so.1: the loader looks for that name.
  ln -s libonnxruntime.so "$staging/root/lib/libonnxruntime.so.1"
  touch "$staging/root/.verified"
  rm -rf "$root"
  mv "$staging/root" "$root"   # atomic publish: a half-extracted tree is never seen as cached
  rm -rf "$staging"
  log "ONNX Runtime $ORT_VERSION installed at $root"
  echo "$root"
}

# The venv lives in venv-<hash of the requirements file> (a venv cannot be moved: its scripts name
# their own path), marked complete only after every package installed; ${DEPS_DIR}/venv is a
# symlink switched to it atomically, so a half-installed venv is never used, and an edited
# requirements file builds a fresh one (older ones are removed).
install_python_venv() {
  local requirements
  requirements="$(cd "$(dirname "$0")" && pwd)/python-requirements.txt"
  local key
  key=$(sha256_of "$requirements" | cut -c1-16)
  local venv="$DEPS_DIR/venv-$key"
  if [ ! -f "$venv/.complete" ]; then
    mkdir -p "$DEPS_DIR"
    rm -rf "$venv"
    log "creating the Python venv from $requirements"
    /usr/bin/python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --no-deps --require-hashes -r "$requirements" >&2
    touch "$venv/.complete"
  fi
  ln -sfn "venv-$key" "$DEPS_DIR/.venv-link"
  mv -T "$DEPS_DIR/.venv-link" "$DEPS_DIR/venv"
  find "$DEPS_DIR" -maxdepth 1 -name 'venv-*' ! -name "venv-$key" -exec rm -rf {} +
  log "Python venv: $DEPS_DIR/venv -> venv-$key"
  echo "$DEPS_DIR/venv"
}

install_debian_packages
ensure_locale
ORT_ROOT=$(install_onnxruntime)
CONVGATE_VENV=$(install_python_venv)
echo "ORT_ROOT=$ORT_ROOT"
echo "CONVGATE_VENV=$CONVGATE_VENV"
