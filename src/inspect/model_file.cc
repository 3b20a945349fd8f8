// VerifyModelFile: the checks by format, and how inspect shows them.
#include "convgate/inspect/model_file.h"

#include <fstream>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/safetensors.h"

namespace convgate::inspect {
namespace {

namespace fs = std::filesystem;

void Fail(ModelFileCheck& check, const std::string& category, const std::string& problem) {
  if (!check.ok()) return;  // the first problem found is the one reported
  check.category = category;
  check.problem = problem;
}

// Lexically inside the model's folder: relative, and no ".." leading out once normalized. (Not by
// canonical paths: a hub snapshot's files are symlinks into its blobs folder, by design.)
bool StaysInside(const std::string& location) {
  const fs::path path(location);
  if (location.empty() || path.is_absolute() || path.has_root_name()) return false;
  const fs::path normal = path.lexically_normal();
  return !normal.empty() && *normal.begin() != "..";
}

void CheckExternalData(ModelFileCheck& check) {
  const fs::path folder = check.path.parent_path();
  for (const std::string& location : check.onnx->external_data_files) {
    ExternalDataFile file;
    file.location = location;
    file.path = folder / location;
    if (!StaysInside(location)) {
      Fail(check, "corrupt-file",
           check.path.string() + ": external data location '" + location +
               "' is not inside the model's folder (an absolute path or one leading out with "
               "'..'): refused, a model may only read files beside it");
      check.external_data.push_back(std::move(file));
      continue;
    }
    std::error_code ec;
    file.present = fs::is_regular_file(file.path, ec);
    if (file.present) file.size = static_cast<uint64_t>(fs::file_size(file.path, ec));
    if (!file.present) {
      Fail(check, "missing-file",
           check.path.string() + ": external data file '" + location + "' is missing (" +
               file.path.string() + ")");
    }
    check.external_data.push_back(std::move(file));
  }
  if (!check.external_data.empty()) check.format = "onnx+external-data";
}

void CheckOnnx(ModelFileCheck& check) {
  check.format = "onnx";
  Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(check.path);
  if (!summary.ok()) {
    Fail(check, "corrupt-file",
         check.path.string() + " is not a readable model: " + summary.status().message());
    return;
  }
  check.sha256 = summary->sha256;
  check.onnx = std::move(*summary);
  CheckExternalData(check);
}

// The formats read whole by convgate's own readers: the parse is the check.
Status ParseTensorFile(const fs::path& path, io::FileFormat format, const Limits& limits) {
  switch (format) {
    case io::FileFormat::kNpy:
      return io::ReadNpy(path, limits).status();
    case io::FileFormat::kNpz:
      return io::ReadNpz(path, limits).status();
    case io::FileFormat::kSafetensors:
      return io::ReadSafetensors(path, limits).status();
    default:
      return Status::OK();
  }
}

std::string FormatKey(io::FileFormat format) {
  switch (format) {
    case io::FileFormat::kNpy:
      return "npy";
    case io::FileFormat::kNpz:
      return "npz";
    case io::FileFormat::kSafetensors:
      return "safetensors";
    case io::FileFormat::kTorchScript:
      return "torchscript";
    default:
      return std::string(io::FileFormatName(format));
  }
}

void CheckSniffed(ModelFileCheck& check, const io::SniffedFile& sniffed, const Limits& limits) {
  if (sniffed.format == io::FileFormat::kEmpty) {
    Fail(check, "corrupt-file", check.path.string() + " is empty (0 bytes)");
    return;
  }
  // ONNX has no magic bytes: a file of no other format must parse as ONNX.
  if (sniffed.format == io::FileFormat::kOther) return CheckOnnx(check);
  check.format = FormatKey(sniffed.format);
  const Status parsed = ParseTensorFile(check.path, sniffed.format, limits);
  if (!parsed.ok()) Fail(check, "corrupt-file", parsed.message());
}

}  // namespace

ModelFileCheck VerifyModelFile(const fs::path& path, const Limits& limits) {
  ModelFileCheck check;
  check.path = path;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    Fail(check, "missing-file", path.string() + " does not exist");
    return check;
  }
  if (fs::is_directory(status)) {
    check.format = "folder";  // a model folder: its files are the runtime's
    return check;
  }
  // A regular file (never blocks: a FIFO is refused before it could be read).
  if (Status regular = CheckRegularFile(path); !regular.ok()) {
    Fail(check, "missing-file", regular.message());
    return check;
  }
  check.size = static_cast<uint64_t>(fs::file_size(path, ec));
  Result<io::SniffedFile> sniffed = io::SniffFile(path);
  if (!sniffed.ok()) {
    Fail(check, "corrupt-file", sniffed.status().message());
  } else {
    CheckSniffed(check, *sniffed, limits);
  }
  // A file refused already is hashed only when that is quick: a 40 GiB sparse file is not.
  if (check.sha256.empty() && (check.ok() || check.size <= kMaxWholeFileBytes)) {
    Result<std::string> sha = Sha256File(path);
    if (sha.ok()) check.sha256 = *sha;
    if (!sha.ok()) Fail(check, "missing-file", sha.status().message());
  }
  return check;
}

nlohmann::json ModelFileCheckJson(const ModelFileCheck& check) {
  nlohmann::json external = nlohmann::json::array();
  for (const ExternalDataFile& file : check.external_data) {
    external.push_back(
        {{"location", file.location}, {"size", file.size}, {"present", file.present}});
  }
  return {
      {"format", check.format},
      {"size", check.size},
      {"sha256", check.sha256},
      {"external_data", std::move(external)},
      {"passed", check.ok()},
      {"category",
       check.category.empty() ? nlohmann::json(nullptr) : nlohmann::json(check.category)},
      {"problem", check.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(check.problem)}};
}

std::string ModelFileCheckText(const ModelFileCheck& check) {
  if (!check.ok()) return "verification FAILED (" + check.category + "): " + check.problem + "\n";
  std::string text = "verified: " + check.format + ", " +
                     FormatBytes(static_cast<int64_t>(check.size)) + ", sha256 " + check.sha256;
  if (!check.external_data.empty()) {
    text += ", external data:";
    for (const ExternalDataFile& file : check.external_data) {
      text += " " + file.location + " (" + FormatBytes(static_cast<int64_t>(file.size)) + ")";
    }
  }
  return text + "\n";
}

}  // namespace convgate::inspect
