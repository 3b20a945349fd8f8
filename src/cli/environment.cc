#include "cli/environment.h"

namespace convgate::cli {

const std::vector<EnvironmentVariable>& EnvironmentVariables() {
  static const std::vector<EnvironmentVariable> kVariables = {
      // Caches and dependencies.
      {"CONVGATE_CACHE_DIR", "~/.cache/convgate",
       "The conversion cache (content-addressed converted models) and the noise-floor "
       "calibration cache (calibration/)"},
      {"CONVGATE_CACHE_MAX_BYTES", "10G",
       "`cache prune` and a batch's cache cleanup: prune least recently used entries until "
       "under this size"},
      {"CACHE_CLEANUP_THRESHOLD", "",
       "The same in gigabytes, as the reference conversion pipeline names it; "
       "CONVGATE_CACHE_MAX_BYTES wins"},
      {"CONVGATE_CACHE_MIN_AGE_SECONDS", "1d", "Entries younger than this are never pruned"},
      {"CACHE_CLEANUP_MIN_AGE_DAYS", "",
       "The same in days (the reference pipeline's name); CONVGATE_CACHE_MIN_AGE_SECONDS wins"},
      {"CONVGATE_DEPS", "~/.cache/convgate-deps",
       "Where scripts/setup.sh put ONNX Runtime and the Python venv ($CONVGATE_DEPS/venv)"},
      {"CONVGATE_VENV", "$CONVGATE_DEPS/venv",
       "The Python venv whose python runs the OpenVINO, optimum and Hugging Face scripts"},
      {"CONVGATE_PYTHON", "/usr/bin/python3",
       "The python that runs torch.onnx.export for `--to onnx` (Debian's python3-torch)"},
      {"CONVGATE_PLUGIN_PATH", "",
       "Folders (':'-separated) searched first for the modules loaded on first use "
       "(libconvgate_backend_*.so, libconvgate_store_postgres.so, libconvgate_image_codec.so); "
       "then the binary's folder and "
       "../lib/convgate"},
      // Scripts the binary runs, for a relocated install or a patched copy.
      {"CONVGATE_TORCH_EXPORT_SCRIPT", "runtime/torch_export.py", "The `--to onnx` exporter"},
      {"CONVGATE_ORT_QUANTIZE_SCRIPT", "runtime/ort_quantize.py",
       "The int8 quantizer (`--to int8-dynamic`, `--to int8-static`)"},
      {"CONVGATE_OPENVINO_EXPORT_SCRIPT", "runtime/openvino_export.py",
       "The OpenVINO and optimum exporter (`--to openvino*`, `--to optimum-*`)"},
      {"CONVGATE_OPENVINO_RUNNER",
       "unset: in-process (the runner script when the build has no OpenVINO runtime)",
       "Runs the `openvino` backend in a runner process, this script under the venv's python "
       "(`runtime/openvino_runner.py` is the project's)"},
      {"CONVGATE_HF_RUNNER", "runtime/hf_runner.py", "The runner process of the `hf` backend"},
      {"OPENCV_IO_MAX_IMAGE_PIXELS", "--max-tensor-bytes / 4",
       "Pixels an image may declare for `--data image:` (OpenCV's own setting; convgate sets it "
       "from --max-tensor-bytes when it is unset, so a file claiming more is refused before it "
       "is decoded)"},
      {"CONVGATE_TOKENIZE_SCRIPT", "runtime/tokenize_text.py",
       "Tokenizes `--data text:` lines with a tokenizer.json (the venv's tokenizers package)"},
      {"CONVGATE_PT2_RUNNER", "runtime/pt2_runner.py",
       "The runner process of the `torch-export` backend (`.pt2` programs)"},
      // Time limits.
      {"CONVGATE_CONVERTER_STALL_SECONDS", "120",
       "A converter whose process group uses no CPU for this long is hung: stopped and retried "
       "once (0: never)"},
      {"CONVGATE_STORE_DEADLINE_SECONDS", "120",
       "How long one call may wait for a PostgreSQL server that answers nothing before it is "
       "cut off (exit 3 naming the store)"},
      {"CONVGATE_STORE", "", "`history`'s store when --store is not given"},
      // The Hugging Face Hub, as huggingface_hub reads it.
      {"HF_ENDPOINT", "https://huggingface.co", "The hub `fetch` and hf:// sources talk to"},
      {"HF_TOKEN", "", "The hub token (`fetch --token` wins; sent only to HF_ENDPOINT's host)"},
      {"HF_TOKEN_PATH", "$HF_HOME/token", "The file holding the token when HF_TOKEN is unset"},
      {"HF_HOME", "$XDG_CACHE_HOME/huggingface or ~/.cache/huggingface",
       "The hub's home: the token file, and hub/ below it"},
      {"HF_HUB_CACHE", "$HF_HOME/hub", "The hub cache, in huggingface_hub's layout"},
      {"HF_HUB_OFFLINE", "", "1: never ask the hub; serve cached files only"},
      {"CONVGATE_HUB_ATTEMPTS", "5", "Tries per hub request, the first included"},
      {"CONVGATE_HUB_BACKOFF_BASE", "1", "Seconds: the first retry waits up to this (doubling)"},
      {"CONVGATE_HUB_BACKOFF_MAX", "30", "Seconds: the longest wait between two tries"},
      {"CONVGATE_HUB_RETRY_AFTER_MAX", "120",
       "Seconds: a Retry-After above this fails the request at once"},
      {"CONVGATE_HUB_STALL_TIMEOUT", "30",
       "Seconds a transfer may move less than 1 KiB a second (also the connect timeout)"},
      // Others read.
      {"NO_COLOR", "", "Any value: no colour in the console, whatever the terminal"},
      {"TERM", "", "`dumb`: progress is printed line by line, not redrawn in place"},
      {"CONVGATE_PROGRESS", "1",
       "0: no progress on stderr (as --quiet); batch sets it for its jobs, whose stderr it keeps"},
      {"TMPDIR", "/tmp",
       "Where temporary folders go (convgate-<pid>-...; swept when their process is gone)"},
      {"OPENCV_LOG_LEVEL", "", "OpenCV's own logging; convgate silences it unless this is set"},
      {"ORT_DISABLE_TELEMETRY", "1 (set by convgate)",
       "ONNX Runtime's telemetry, turned off before the first session"},
  };
  return kVariables;
}

std::string EnvironmentMarkdown() {
  std::string text =
      "# Environment variables\n\n"
      "Every variable convgate reads, generated by `convgate docs environment` from the table in "
      "src/cli/environment.cc (tests/doc/docs_current.py checks that it is current and complete). "
      "A flag, when there is one, wins over its variable.\n\n"
      "| variable | default | meaning |\n|---|---|---|\n";
  for (const EnvironmentVariable& variable : EnvironmentVariables()) {
    text += "| `" + std::string(variable.name) + "` | " +
            (variable.default_value.empty() ? std::string("-")
                                            : "`" + std::string(variable.default_value) + "`") +
            " | " + std::string(variable.meaning) + " |\n";
  }
  return text;
}

}  // namespace convgate::cli
