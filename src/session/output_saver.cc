#include "convgate/session/output_saver.h"

#include <cctype>
#include <string>

namespace convgate::session {

bool OutputSaver::HoldsEverySample(const std::optional<std::filesystem::path>& path) {
  if (!path) return false;
  std::string ext = path->extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".safetensors";
}

void OutputSaver::Keep(const TensorMap& outputs, size_t samples,
                       const std::vector<TensorInfo>& declared) {
  if (!active() || !failed_.ok()) return;
  if (!writer_) {
    Result<inputs::DatasetWriter> opened =
        inputs::DatasetWriter::ForOutputs(*path_, samples, declared);
    if (!opened.ok()) {
      failed_ = opened.status();
      return;
    }
    writer_.emplace(std::move(opened).value());
  }
  failed_ = writer_->Add(outputs);
}

std::optional<GateError> OutputSaver::Write(SideRecord& side) {
  if (!active() || (!writer_ && failed_.ok())) return std::nullopt;
  Status saved = failed_.ok() ? writer_->Finish() : failed_;
  if (!saved.ok()) return GateError{Stage::kWrite, saved.WithContext("--save-outputs")};
  side.outputs_saved_to = path_->string();
  return std::nullopt;
}

}  // namespace convgate::session
