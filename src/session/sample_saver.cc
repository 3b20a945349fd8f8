#include "convgate/session/sample_saver.h"

#include <cctype>

namespace convgate::session {

bool SampleSaver::HoldsEverySample(const std::optional<std::filesystem::path>& path) {
  if (!path) return false;
  std::string ext = path->extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".safetensors";
}

std::string SampleSaver::Flag() const {
  return what_ == What::kInputs ? "--save-inputs" : "--save-outputs";
}

Result<inputs::DatasetWriter> SampleSaver::Open(size_t samples,
                                                const std::vector<TensorInfo>& declared) const {
  if (what_ == What::kOutputs) return inputs::DatasetWriter::ForOutputs(*path_, samples, declared);
  Signature signature;
  signature.inputs = declared;
  return inputs::DatasetWriter::ForInputs(*path_, samples, signature);
}

Status SampleSaver::Keep(const TensorMap& sample, size_t samples,
                         const std::vector<TensorInfo>& declared) {
  if (!active() || !failed_.ok()) return failed_;
  if (!writer_) {
    Result<inputs::DatasetWriter> opened = Open(samples, declared);
    if (!opened.ok()) {
      failed_ = opened.status().WithContext(Flag());
      return failed_;
    }
    writer_.emplace(std::move(opened).value());
  }
  Status added = writer_->Add(sample);
  if (!added.ok()) {
    failed_ = added.WithContext(Flag());
    return failed_;
  }
  ++kept_;
  return Status::OK();
}

std::optional<GateError> SampleSaver::Finish(std::string& saved_to) {
  if (!active() || (!writer_ && failed_.ok())) return std::nullopt;
  Status saved = failed_.ok() ? writer_->Finish() : failed_;
  writer_.reset();
  if (!saved.ok()) {
    return GateError{Stage::kWrite, failed_.ok() ? saved.WithContext(Flag()) : saved};
  }
  saved_to = path_->string();
  return std::nullopt;
}

}  // namespace convgate::session
