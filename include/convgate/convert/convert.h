// Conversions: turning a source model into a target model, built in (ONNX opset upgrade, fp16,
// ONNX Runtime's optimized model, PyTorch -> ONNX through a shipped script) or by any external
// command. Every conversion has a timeout, retries transient failures with exponential backoff,
// and is cached by content (sha256 of the source + converter + its version + parameters), written
// atomically so the cache is never left corrupt. A cache that cannot be used (cannot be created,
// read-only, full, or filling up during the conversion) never fails a conversion: it runs in a
// temporary folder instead, and the record notes "not cached: <why>".
//
// Built-in C++ conversions run in a forked child process, so the timeout applies to them too and
// a crash inside a converter library is a conversion failure, not a crash of convgate. Convert
// forks: call it before starting threads (the CLI does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/exit_code.h"
#include "convgate/core/status.h"

namespace convgate::convert {

// What went wrong, for callers that act on it (retry, report, exit code). Every failure is also a
// Status whose message names the source, the converter and the problem.
enum class ConversionError {
  kNone,
  kBadRequest,        // unknown kind, bad parameter, unreachable opset (usage)
  kSourceNotFound,    // the source file does not exist
  kConverterMissing,  // the converter program or script cannot be found or run
  kFailed,            // the converter ran and failed (non-zero exit, an exception, a crash)
  kTimedOut,          // killed after the timeout
  kNoOutput,          // it exited 0 but wrote nothing (or an empty file)
  kInvalidOutput,     // it wrote something that is not a valid model (checked for .onnx outputs)
  kCacheCorrupt,      // a cache entry failed verification (it is discarded and rebuilt)
  kIoError,           // convgate could not read the source or write the output
};

// "bad request", "source not found", "converter missing", "conversion failed", "timed out",
// "no output", "invalid output", "cache corrupt", "i/o error"; "none" for kNone.
std::string_view ConversionErrorName(ConversionError error);

// Exit code for the CLI: 0 for kNone, usage for kBadRequest, "cannot run" for every other failure.
ExitCode ExitCodeFor(ConversionError error);

// The start of a record note saying the conversion fell back to another path (ConversionRecord).
inline constexpr char kFallbackNotePrefix[] = "fallback: ";

struct ConversionRequest {
  // A model file (or, for external converters, a file or directory). For kind "onnx" with the
  // `arch` parameter it may be empty: the torchvision architecture is the source.
  std::filesystem::path source;
  // "opset:17", "fp16", "ort-optimized:basic|extended|all", "onnx" (PyTorch -> ONNX), "openvino",
  // "openvino:fp16" (an OpenVINO IR), "optimum-openvino", "optimum-onnx" (a Hugging Face model
  // folder exported by optimum), or "external" (argv below).
  std::string kind;
  // Kind-specific parameters (docs/guide.md lists them), e.g. fp16: keep_io_types=1,
  // op_block_list=Resize,TopK, node_block_list=..., clamp=1; onnx: opset=17, arch=resnet18,
  // input_shape=1x3x224x224, dynamic_axes=batch. external: version=STRING (the converter's
  // version, when hashing its program is not enough). Unknown names are kBadRequest.
  std::map<std::string, std::string> params;
  // external: argv with {src} and {out} substituted (never a shell string).
  std::vector<std::string> converter_argv;
  // Where the result is copied (atomically; parent directories are created). Empty: the cache
  // path is used, or without the cache the temporary folder it was made in, which the record's
  // output_hold keeps until the caller lets go (verify --no-cache). An OpenVINO IR goes to OUT.xml
  // (OUT.bin beside it); a folder output (optimum-*) to the folder OUT, replacing what was there.
  std::filesystem::path output;
  // Limit per attempt, seconds. Default: 10 minutes, the longest a PyTorch export of a large
  // model takes on this project's 2-core machine with room to spare; hangs are cut there.
  double timeout_seconds = 600.0;
  // Attempts in total (1 = no retry). Only failures that look transient are retried: see
  // IsTransientFailure in src/convert/retry.h and docs/guide.md.
  int max_attempts = 3;
  // Delay before the first retry; each further retry doubles it (0.5 s, 1 s, 2 s, ...), capped
  // at 60 s. Converters failing on a busy machine or a flaky download recover within seconds.
  double backoff_seconds = 0.5;
  bool use_cache = true;
  // Cache root; empty: ${CONVGATE_CACHE_DIR:-$HOME/.cache/convgate} (see cache.h).
  std::filesystem::path cache_dir;
};

struct ConversionRecord {
  std::string kind;
  std::string tool;          // "onnx version converter", "convgate fp16", "onnxruntime", ...
  std::string tool_version;  // "1.12.0", "1.29.0", the script's torch version, ...
  std::string converter;     // what ran, for messages: the argv template, or tool + kind
  std::map<std::string, std::string> params;
  std::string source_path;
  std::string source_sha256;  // of the file, or of a directory's listing and contents
  // The model: -o, or the cache's copy. An OpenVINO IR's .bin lies beside its .xml;
  // optimum-openvino's is a folder (the hf backend runs it); optimum-onnx's is the main .onnx
  // file inside its folder (a note names the folder).
  std::string output_path;
  std::string output_sha256;
  int64_t output_bytes = 0;
  std::string cache_key;   // sha256 over the source hash, converter, version and parameters
  std::string cache_path;  // the entry's model file, when cached
  bool cache_hit = false;
  double seconds = 0.0;  // wall time of the whole Convert call
  int attempts = 0;      // converter runs (0 on a cache hit)
  // "3 values outside the float16 range ...", cache events; a note starting with
  // kFallbackNotePrefix says the conversion took another path than the one asked for (verify puts
  // it in conversion_path), e.g. optimum-openvino's int4 weights after the fp16 export ran out of
  // memory. Notes are cached with the output, so a cache hit says it too.
  std::vector<std::string> notes;
  std::string log_tail;  // the converter's stderr (last lines) on failure
  ConversionError error = ConversionError::kNone;
  std::string error_message;  // the failing Status's message
  // Keeps output_path valid while this record, or a copy of it, lives. Without -o the output is
  // read where it was made: in the cache, this holds the entry's shared lock, so a concurrent
  // `cache prune` skips it; outside it (a cache that could not be used: a "not cached" note),
  // this owns the temporary folder, removed when the last copy goes. Empty when the output is at
  // the requested path.
  std::shared_ptr<void> output_hold;
};

// Converts (or finds in the cache). On failure the Status explains it and, when `on_error` is not
// null, *on_error receives the record so far (error, attempts, log tail). Partial outputs are
// never left at `output` or in the cache.
Result<ConversionRecord> Convert(const ConversionRequest& request, ConversionRecord* on_error);

}  // namespace convgate::convert
